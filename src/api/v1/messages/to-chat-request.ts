import type { ChatCompletionRequest } from '../../../openai/types.js';
import type { CountTokensRequest } from '../../../providers/anthropic/wire-types.js';
import { requestError } from './request-error.js';
import { type ChatMessageOrigin, toChatMessages } from './to-chat-messages.js';
import { toChatTools } from './to-chat-tools.js';
import { type TranslationTarget, untranslatable } from './translation-target.js';

/**
 * A Messages request -> the OpenAI chat request every non-Anthropic provider is called with, and the names of the
 * parameters left out (for `x-switchboard-dropped-parameters`). Parameters are translated where chat has them:
 * - `max_tokens` -> `max_completion_tokens`: OpenAI's current field and the only one its reasoning models accept
 *   (they refuse `max_tokens`); the Gemini and local adapters read either. `max_tokens: 0` (Anthropic's prompt-cache
 *   warm-up) means nothing elsewhere and is refused;
 * - `stop_sequences` -> `stop`; `temperature`, `top_p` as they are (Anthropic's ranges lie within OpenAI's);
 * - `top_k` only for Gemini, whose adapter sends it as `topK`; OpenAI's API refuses it and the local provider
 *   chooses its own, so elsewhere it is dropped and named;
 * - `metadata.user_id` -> `user`; `output_config.format` (json_schema) -> `response_format`;
 * - `stream` -> `stream`, with usage always asked for.
 * Left out and named, since none changes the shape of the answer: `thinking` (a chat model reasons or not on its
 * own), `output_config.effort`, `context_management`, `service_tier`, `container`, `inference_geo`, the top-level
 * `cache_control`, and any field the gateway does not know. Refused: `mcp_servers` (the model would lose the tools
 * they provide) and whatever the messages and tools hold that chat cannot express (see the other to-chat modules).
 */

export interface ChatTranslation {
  request: ChatCompletionRequest;
  /** Parameters of the Messages request that were not sent, by their Messages names. */
  dropped: string[];
  /** Per chat message, where it came from in the Messages request (to name errors by the client's field). */
  origins: ChatMessageOrigin[];
}

/** Fields read (or deliberately refused) below; any other field present is dropped and named. */
const translated = new Set([
  'model',
  'max_tokens',
  'messages',
  'system',
  'tools',
  'tool_choice',
  'stop_sequences',
  'temperature',
  'top_p',
  'top_k',
  'metadata',
  'stream',
  'output_config',
  'thinking',
  'mcp_servers',
]);

function responseFormat(
  request: CountTokensRequest,
  target: TranslationTarget,
  dropped: string[],
): Record<string, unknown> | undefined {
  const config = request.output_config;
  if (!config) return undefined;
  if (typeof config.effort === 'string') dropped.push('output_config.effort');
  const format = config.format;
  if (!format) return undefined;
  if (format.type !== 'json_schema')
    return untranslatable('output_config.format.type', `an output format of type '${format.type}'`, target);
  return { type: 'json_schema', json_schema: { name: 'response', schema: format.schema ?? {}, strict: true } };
}

export function toChatRequest(request: CountTokensRequest, target: TranslationTarget): ChatTranslation {
  const dropped: string[] = [];
  if (Array.isArray(request.mcp_servers) && request.mcp_servers.length > 0) {
    untranslatable('mcp_servers', 'MCP servers connected through Anthropic', target);
  }
  if (request.max_tokens === 0) {
    throw requestError(
      'max_tokens',
      'max_tokens: 0 (warming the prompt cache) is only meaningful to Anthropic models.',
    );
  }
  const { messages, origins } = toChatMessages(request, target);
  const chat: ChatCompletionRequest = { model: request.model, messages };
  Object.assign(chat, toChatTools(request, target));
  if (typeof request.max_tokens === 'number') chat.max_completion_tokens = request.max_tokens;
  if (request.stop_sequences && request.stop_sequences.length > 0) chat.stop = request.stop_sequences;
  if (typeof request.temperature === 'number') chat.temperature = request.temperature;
  if (typeof request.top_p === 'number') chat.top_p = request.top_p;
  if (typeof request.top_k === 'number') {
    if (target === 'gemini') chat.top_k = request.top_k;
    else dropped.push('top_k');
  }
  const user = request.metadata?.user_id;
  if (typeof user === 'string' && user !== '') chat.user = user;
  const format = responseFormat(request, target, dropped);
  if (format) chat.response_format = format;
  if (request.thinking && request.thinking.type !== 'disabled') dropped.push('thinking');
  if (request.stream === true) {
    chat.stream = true;
    chat.stream_options = { include_usage: true };
  }
  for (const name in request) {
    if (!translated.has(name) && request[name] !== undefined && request[name] !== null) dropped.push(name);
  }
  return { request: chat, dropped, origins };
}
