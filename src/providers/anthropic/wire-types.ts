/**
 * The parts of Anthropic's Messages API (`POST /v1/messages`, anthropic-version 2023-06-01) the gateway writes and
 * reads: the adapter (chat -> Anthropic) and the `/v1/messages` surface (a client's Messages request, see
 * `MessagesRequest`). Checked against anthropic-sdk-python's generated types (message_create_params.py, message.py,
 * usage.py, raw_*_event.py), anthropic-sdk-typescript's resources/messages/messages.ts and the streaming guide.
 */

export interface CacheControl {
  type: 'ephemeral';
  ttl?: string;
}

export interface TextBlock {
  type: 'text';
  text: string;
  cache_control?: CacheControl;
}

/** A file uploaded through Anthropic's Files API (beta): only Anthropic can resolve it. */
export interface FileSource {
  type: 'file';
  file_id: string;
}

export interface ImageBlock {
  type: 'image';
  source: { type: 'base64'; media_type: string; data: string } | { type: 'url'; url: string } | FileSource;
  cache_control?: CacheControl;
}

export interface DocumentBlock {
  type: 'document';
  source:
    | { type: 'base64'; media_type: string; data: string }
    | { type: 'url'; url: string }
    | { type: 'text'; media_type: string; data: string }
    | { type: 'content'; content: string | Array<TextBlock | ImageBlock> }
    | FileSource;
  title?: string | null;
  context?: string | null;
  cache_control?: CacheControl;
}

export interface ToolUseBlock {
  type: 'tool_use';
  id: string;
  name: string;
  input: Record<string, unknown>;
  cache_control?: CacheControl;
}

/** Search results a client supplies for Claude to cite (in a user turn or a tool result). */
export interface SearchResultBlock {
  type: 'search_result';
  source: string;
  title: string;
  content: TextBlock[];
  cache_control?: CacheControl;
}

export interface ToolResultBlock {
  type: 'tool_result';
  tool_use_id: string;
  content?: string | Array<TextBlock | ImageBlock | DocumentBlock | SearchResultBlock | UnknownBlock>;
  is_error?: boolean;
  cache_control?: CacheControl;
}

export type RequestBlock = TextBlock | ImageBlock | DocumentBlock | ToolUseBlock | ToolResultBlock;

/** A block of a translated turn: thinking only opens an assistant turn. */
export type TurnBlock = RequestBlock | ThinkingBlock | RedactedThinkingBlock;

export interface AnthropicMessage {
  role: 'user' | 'assistant';
  content: TurnBlock[];
}

/** A custom tool (`type` absent or "custom"): the client runs it. */
export interface AnthropicTool {
  type?: 'custom' | null;
  name: string;
  description?: string;
  input_schema: Record<string, unknown>;
  cache_control?: CacheControl;
}

/**
 * A tool that is not a plain custom tool: a server tool Anthropic runs (`web_search_20250305`, `code_execution_…`,
 * `web_fetch_…`) or one with an Anthropic-defined schema (`bash_…`, `text_editor_…`, `memory_…`).
 */
export interface TypedTool {
  type: string;
  name: string;
  [field: string]: unknown;
}

export type AnthropicToolChoice =
  | { type: 'auto'; disable_parallel_tool_use?: boolean }
  | { type: 'any'; disable_parallel_tool_use?: boolean }
  | { type: 'tool'; name: string; disable_parallel_tool_use?: boolean }
  | { type: 'none' };

export interface AnthropicRequest {
  model: string;
  max_tokens: number;
  messages: AnthropicMessage[];
  system?: TextBlock[];
  temperature?: number;
  top_p?: number;
  top_k?: number;
  stop_sequences?: string[];
  stream?: boolean;
  metadata?: { user_id: string };
  tools?: AnthropicTool[];
  tool_choice?: AnthropicToolChoice;
  output_config?: { format: { type: 'json_schema'; schema: Record<string, unknown> } };
  thinking?: unknown;
}

export interface AnthropicUsage {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
}

export interface ThinkingBlock {
  type: 'thinking';
  thinking: string;
  /** Opaque; Anthropic verifies it when the block is sent back, so it must come back byte for byte. */
  signature: string;
}

export interface RedactedThinkingBlock {
  type: 'redacted_thinking';
  data: string;
}

/** A block of a type the gateway does not read (newer or server-side blocks): kept as it came. */
export interface UnknownBlock {
  type: string;
  [field: string]: unknown;
}

/** A content block of a client's Messages request. */
export type MessageBlock = RequestBlock | ThinkingBlock | RedactedThinkingBlock | SearchResultBlock | UnknownBlock;

/** A turn of a client's Messages request. The newest SDKs also type a `system` role (a mid-conversation instruction). */
export interface MessageParam {
  role: 'user' | 'assistant' | 'system';
  content: string | MessageBlock[];
  [field: string]: unknown;
}

export type ThinkingConfig =
  | { type: 'enabled'; budget_tokens: number; [field: string]: unknown }
  | { type: 'disabled' }
  | { type: 'adaptive'; [field: string]: unknown };

/**
 * The body of `POST /v1/messages/count_tokens`, and all of a Messages request but the requirement of `max_tokens`.
 * Fields the gateway does not read (`container`, `context_management`, `mcp_servers`, `service_tier`, and anything
 * newer) are kept: they reach Anthropic upstreams untouched.
 */
export interface CountTokensRequest {
  model: string;
  max_tokens?: number;
  messages: MessageParam[];
  system?: string | TextBlock[];
  tools?: Array<AnthropicTool | TypedTool>;
  tool_choice?: AnthropicToolChoice;
  stop_sequences?: string[];
  temperature?: number;
  top_p?: number;
  top_k?: number;
  thinking?: ThinkingConfig;
  metadata?: { user_id?: string | null; [field: string]: unknown };
  stream?: boolean;
  output_config?: { effort?: string | null; format?: { type: string; schema?: Record<string, unknown> } | null };
  [field: string]: unknown;
}

/** The body of `POST /v1/messages` as a client sends it. */
export interface MessagesRequest extends CountTokensRequest {
  max_tokens: number;
}

export type ResponseBlock =
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id: string; name: string; input: unknown }
  | { type: 'thinking'; thinking: string; signature?: string }
  | { type: 'redacted_thinking'; data: string }
  | { type: string; [field: string]: unknown };

export interface AnthropicResponse {
  id: string;
  type: 'message';
  role: 'assistant';
  model: string;
  content: ResponseBlock[];
  stop_reason: string | null;
  stop_sequence: string | null;
  usage: AnthropicUsage;
}
