/**
 * The parts of Anthropic's Messages API (`POST /v1/messages`, anthropic-version 2023-06-01) the adapter writes and
 * reads. Checked against anthropic-sdk-python's generated types (message_create_params.py, message.py, usage.py,
 * raw_*_event.py) and the streaming guide.
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

export interface ImageBlock {
  type: 'image';
  source: { type: 'base64'; media_type: string; data: string } | { type: 'url'; url: string };
  cache_control?: CacheControl;
}

export interface DocumentBlock {
  type: 'document';
  source: { type: 'base64'; media_type: string; data: string } | { type: 'url'; url: string };
  title?: string;
  cache_control?: CacheControl;
}

export interface ToolUseBlock {
  type: 'tool_use';
  id: string;
  name: string;
  input: Record<string, unknown>;
  cache_control?: CacheControl;
}

export interface ToolResultBlock {
  type: 'tool_result';
  tool_use_id: string;
  content: string | TextBlock[];
  is_error?: boolean;
  cache_control?: CacheControl;
}

export type RequestBlock = TextBlock | ImageBlock | DocumentBlock | ToolUseBlock | ToolResultBlock;

export interface AnthropicMessage {
  role: 'user' | 'assistant';
  content: RequestBlock[];
}

export interface AnthropicTool {
  name: string;
  description?: string;
  input_schema: Record<string, unknown>;
  cache_control?: CacheControl;
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
