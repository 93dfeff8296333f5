/**
 * The parts of the OpenAI chat-completions wire format the gateway reads or writes itself. Everything else in a
 * request or response passes through untouched, so these types are deliberately open (index signatures).
 */

export type Role = 'system' | 'developer' | 'user' | 'assistant' | 'tool' | 'function';

export interface ChatMessage {
  role: Role;
  content?: unknown;
  name?: string;
  tool_calls?: ToolCall[];
  tool_call_id?: string;
  [field: string]: unknown;
}

export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export interface ChatCompletionRequest {
  model: string;
  messages: ChatMessage[];
  stream?: boolean | null;
  stream_options?: { include_usage?: boolean | null; [field: string]: unknown } | null;
  max_tokens?: number | null;
  max_completion_tokens?: number | null;
  [field: string]: unknown;
}

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details?: {
    cached_tokens?: number | null;
    cache_write_tokens?: number | null;
    [field: string]: unknown;
  } | null;
  completion_tokens_details?: { reasoning_tokens?: number | null; [field: string]: unknown } | null;
  [field: string]: unknown;
}

export interface ChatCompletionChoice {
  index: number;
  message?: { role?: string; content?: string | null; [field: string]: unknown };
  delta?: { role?: string; content?: string | null; [field: string]: unknown };
  finish_reason: string | null;
  [field: string]: unknown;
}

export interface ChatCompletion {
  id: string;
  object: 'chat.completion' | 'chat.completion.chunk';
  created: number;
  model: string;
  choices: ChatCompletionChoice[];
  usage?: Usage | null;
  [field: string]: unknown;
}
