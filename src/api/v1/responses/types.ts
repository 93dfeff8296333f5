/**
 * The parts of the OpenAI Responses wire format (and of the Open Responses specification) the gateway reads or
 * writes itself. Like the chat types (src/openai/types.ts) they are open: fields the gateway does not know pass through.
 */

export type JsonObject = Record<string, unknown>;

export type MessageRole = 'user' | 'assistant' | 'system' | 'developer';

/** A content part of a message or of a function call's output (`input_text`, `input_image`, `output_text`, …). */
export interface ContentPart {
  type: string;
  text?: string;
  image_url?: string | null;
  file_id?: string | null;
  file_data?: string;
  file_url?: string;
  filename?: string;
  detail?: string;
  refusal?: string;
  input_audio?: { data?: unknown; format?: unknown };
  annotations?: unknown[];
  logprobs?: unknown[];
  [field: string]: unknown;
}

/** A `message` item; `type` may be absent in input (OpenAI's "easy input message"). */
export interface MessageItem {
  type?: 'message';
  id?: string;
  role: MessageRole;
  content: string | ContentPart[];
  status?: string;
  [field: string]: unknown;
}

export interface FunctionCallItem {
  type: 'function_call';
  id?: string;
  call_id: string;
  name: string;
  /** Set when the function belongs to a `namespace` tool. */
  namespace?: string;
  arguments: string;
  status?: string;
  [field: string]: unknown;
}

export interface FunctionCallOutputItem {
  type: 'function_call_output';
  id?: string;
  call_id: string;
  output: string | ContentPart[];
  status?: string;
  [field: string]: unknown;
}

export interface SummaryText {
  type: 'summary_text';
  text: string;
}

export interface ReasoningItem {
  type: 'reasoning';
  id?: string;
  summary: SummaryText[];
  content?: Array<{ type: string; text: string }>;
  encrypted_content?: string | null;
  status?: string;
  [field: string]: unknown;
}

export interface ItemReference {
  type: 'item_reference';
  id: string;
}

/** Any input item; those of other types (hosted tool calls, provider extensions) are kept as they came. */
export type InputItem =
  | MessageItem
  | FunctionCallItem
  | FunctionCallOutputItem
  | ReasoningItem
  | ItemReference
  | OtherItem;

export interface OtherItem {
  type: string;
  id?: string;
  [field: string]: unknown;
}

export interface FunctionTool {
  type: 'function';
  name: string;
  description?: string | null;
  parameters?: JsonObject | null;
  strict?: boolean | null;
  [field: string]: unknown;
}

/** Function (and custom) tools grouped under a name, as Codex sends its tools. */
export interface NamespaceTool {
  type: 'namespace';
  name: string;
  description?: string;
  tools: Array<FunctionTool | OtherTool>;
  [field: string]: unknown;
}

export interface OtherTool {
  type: string;
  [field: string]: unknown;
}

export type ResponsesTool = FunctionTool | NamespaceTool | OtherTool;

export type ToolChoice = 'none' | 'auto' | 'required' | { type: string; name?: string; [field: string]: unknown };

export interface TextFormat {
  type: 'text' | 'json_object' | 'json_schema';
  name?: string;
  schema?: JsonObject;
  description?: string;
  strict?: boolean | null;
  [field: string]: unknown;
}

export interface TextSettings {
  format?: TextFormat | null;
  verbosity?: string | null;
  [field: string]: unknown;
}

export interface ReasoningSettings {
  effort?: string | null;
  summary?: string | null;
  [field: string]: unknown;
}

/** `POST /v1/responses`, validated (validate-request.ts). */
export interface ResponsesRequest {
  model: string;
  input?: string | InputItem[];
  instructions?: string | null;
  tools?: ResponsesTool[] | null;
  tool_choice?: ToolChoice | null;
  parallel_tool_calls?: boolean | null;
  text?: TextSettings | null;
  reasoning?: ReasoningSettings | null;
  max_output_tokens?: number | null;
  max_tool_calls?: number | null;
  temperature?: number | null;
  top_p?: number | null;
  presence_penalty?: number | null;
  frequency_penalty?: number | null;
  top_logprobs?: number | null;
  metadata?: Record<string, string> | null;
  store?: boolean | null;
  stream?: boolean | null;
  background?: boolean | null;
  previous_response_id?: string | null;
  include?: string[] | null;
  truncation?: 'auto' | 'disabled' | null;
  service_tier?: string | null;
  user?: string | null;
  prompt_cache_key?: string | null;
  safety_identifier?: string | null;
  [field: string]: unknown;
}

export interface OutputText {
  type: 'output_text';
  text: string;
  annotations: unknown[];
  logprobs: unknown[];
}

export interface OutputRefusal {
  type: 'refusal';
  refusal: string;
}

export type ItemStatus = 'in_progress' | 'completed' | 'incomplete';

export interface OutputMessage {
  id: string;
  type: 'message';
  status: ItemStatus;
  role: 'assistant';
  content: Array<OutputText | OutputRefusal>;
}

export interface OutputFunctionCall {
  id: string;
  type: 'function_call';
  status: ItemStatus;
  arguments: string;
  call_id: string;
  name: string;
  namespace?: string;
}

export interface OutputReasoning {
  id: string;
  type: 'reasoning';
  status: ItemStatus;
  summary: SummaryText[];
  /**
   * The upstream's own reasoning text (an OpenAI-compatible server's `reasoning_content`, the built-in model's) when no
   * summary was asked for: what the Open Responses schema gives open models' reasoning, and what goes back to them.
   */
  content?: ReasoningText[];
  /** Claude's signed thinking in the gateway's envelope (reasoning-envelope.ts), when asked for or stored. */
  encrypted_content?: string;
}

export interface ReasoningText {
  type: 'reasoning_text';
  text: string;
}

export type OutputItem = OutputMessage | OutputFunctionCall | OutputReasoning;

export interface ResponseUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number; cache_write_tokens?: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}

export type ResponseStatus = 'completed' | 'incomplete' | 'failed' | 'in_progress' | 'queued' | 'cancelled';

/** The response object, with every field the Open Responses schema requires (request settings echoed). */
export interface ResponseObject {
  id: string;
  object: 'response';
  created_at: number;
  completed_at: number | null;
  status: ResponseStatus;
  error: { code: string; message: string } | null;
  incomplete_details: { reason: string } | null;
  instructions: string | null;
  max_output_tokens: number | null;
  max_tool_calls: number | null;
  model: string;
  output: OutputItem[];
  parallel_tool_calls: boolean;
  previous_response_id: string | null;
  reasoning: { effort: string | null; summary: string | null };
  service_tier: string;
  store: boolean;
  background: boolean;
  temperature: number;
  text: { format: JsonObject; verbosity: string };
  tool_choice: ToolChoice;
  tools: ResponsesTool[];
  top_logprobs: number;
  top_p: number;
  presence_penalty: number;
  frequency_penalty: number;
  truncation: string;
  usage: ResponseUsage | null;
  user: string | null;
  metadata: Record<string, string>;
  safety_identifier: string | null;
  prompt_cache_key: string | null;
  [field: string]: unknown;
}

/** One streaming event: `type` (also the SSE `event:` line) and its place in the stream. */
export interface ResponseEvent {
  type: string;
  sequence_number: number;
  [field: string]: unknown;
}
