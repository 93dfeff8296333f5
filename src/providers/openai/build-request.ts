import type { OpenAiProviderConfig } from '../../config/schema.js';
import type { ChatCompletionRequest } from '../../openai/types.js';
import type { ProviderCall } from '../provider.js';
import { stripSignatures } from '../tool-call-id.js';

export interface OpenAiHttpRequest {
  path: string;
  headers: Record<string, string>;
  body: string;
}

/**
 * The upstream request for an OpenAI-compatible server: the client's body with only what must change rewritten
 * (the model name, and usage always requested when streaming so the log and limits never see a stream without
 * usage; tool-call ids minted for another provider lose the state they carry). The client's own headers and key are
 * never forwarded.
 */
export function buildOpenAiChatRequest(
  call: ProviderCall,
  config: OpenAiProviderConfig,
  basePath: string,
): OpenAiHttpRequest {
  const stream = call.request.stream === true;
  const body: ChatCompletionRequest = { ...stripSignatures(call.request), model: call.model.upstreamModel };
  if (stream) body.stream_options = { ...(call.request.stream_options ?? {}), include_usage: true };
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: stream ? 'text/event-stream' : 'application/json',
    ...config.headers,
  };
  if (config.apiKey) headers.authorization = `Bearer ${config.apiKey}`;
  return { path: `${basePath}/chat/completions`, headers, body: JSON.stringify(body) };
}
