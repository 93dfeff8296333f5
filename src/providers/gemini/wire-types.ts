/**
 * The parts of the Gemini API (`models/{model}:generateContent`, `:streamGenerateContent?alt=sse`, v1beta) the adapter
 * writes and reads; camelCase as on the wire. Checked against googleapis/python-genai (types.py, models.py) and the
 * Gemini API reference (GenerationConfig, UsageMetadata, FinishReason).
 */

export interface GeminiPart {
  text?: string;
  /** True on thought-summary parts. */
  thought?: boolean;
  thoughtSignature?: string;
  inlineData?: { mimeType: string; data: string };
  fileData?: { mimeType?: string; fileUri: string };
  functionCall?: { name?: string; args?: Record<string, unknown>; id?: string };
  functionResponse?: { name: string; response: Record<string, unknown>; id?: string };
  [field: string]: unknown;
}

export interface GeminiContent {
  role?: 'user' | 'model';
  parts: GeminiPart[];
}

export interface GeminiFunctionDeclaration {
  name: string;
  description?: string;
  /** JSON Schema, as OpenAI tools carry it (the `parameters` field takes an OpenAPI subset instead). */
  parametersJsonSchema?: Record<string, unknown>;
}

export interface GeminiGenerationConfig {
  temperature?: number;
  topP?: number;
  topK?: number;
  candidateCount?: number;
  maxOutputTokens?: number;
  stopSequences?: string[];
  presencePenalty?: number;
  frequencyPenalty?: number;
  seed?: number;
  responseMimeType?: string;
  responseJsonSchema?: Record<string, unknown>;
  responseLogprobs?: boolean;
  logprobs?: number;
  thinkingConfig?: GeminiThinkingConfig;
}

/** Gemini 2.5 takes a budget, Gemini 3 a level, never both (thinking.ts). */
export interface GeminiThinkingConfig {
  /** Thought summaries come back as parts with `thought: true`. */
  includeThoughts?: boolean;
  thinkingBudget?: number;
  thinkingLevel?: 'minimal' | 'low' | 'medium' | 'high';
}

export interface GeminiRequest {
  contents: GeminiContent[];
  systemInstruction?: { parts: GeminiPart[] };
  tools?: Array<{ functionDeclarations: GeminiFunctionDeclaration[] }>;
  toolConfig?: { functionCallingConfig: { mode: 'AUTO' | 'ANY' | 'NONE'; allowedFunctionNames?: string[] } };
  generationConfig?: GeminiGenerationConfig;
  safetySettings?: unknown;
}

export interface GeminiUsageMetadata {
  promptTokenCount?: number;
  candidatesTokenCount?: number;
  totalTokenCount?: number;
  cachedContentTokenCount?: number;
  thoughtsTokenCount?: number;
  toolUsePromptTokenCount?: number;
}

export interface GeminiLogprobCandidate {
  token?: string;
  logProbability?: number;
}

export interface GeminiLogprobsResult {
  topCandidates?: Array<{ candidates?: GeminiLogprobCandidate[] }>;
  chosenCandidates?: GeminiLogprobCandidate[];
}

export interface GeminiCandidate {
  index?: number;
  content?: { role?: string; parts?: GeminiPart[] };
  finishReason?: string;
  logprobsResult?: GeminiLogprobsResult;
}

export interface GeminiResponse {
  candidates?: GeminiCandidate[];
  promptFeedback?: { blockReason?: string };
  usageMetadata?: GeminiUsageMetadata;
  modelVersion?: string;
  responseId?: string;
}
