import type { ProviderConfigOf } from '../../config/schema.js';
import type { CancelSignal } from '../../server/cancellation.js';
import type { UpstreamResponse } from '../../upstream/client.js';
import { malformed, parseJsonObject, sseEvents } from '../http.js';
import { createHttpProvider } from '../http-provider.js';
import type { Provider, ProviderDependencies, StreamItem } from '../provider.js';
import { stripSignatures } from '../tool-call-id.js';
import { convertRequest, unsupportedParameters } from './convert-request.js';
import { convertResponse } from './convert-response.js';
import { anthropicStreamError, parseAnthropicError } from './parse-error.js';
import { type AnthropicStreamEvent, createAnthropicStreamTranslator } from './translate-stream.js';
import type { AnthropicResponse } from './wire-types.js';

const nowSeconds = () => Math.floor(Date.now() / 1000);

async function* translateStream(
  providerName: string,
  upstreamModel: string,
  response: UpstreamResponse,
  signal: CancelSignal,
): AsyncGenerator<StreamItem> {
  const translator = createAnthropicStreamTranslator(providerName, upstreamModel, nowSeconds());
  for await (const event of sseEvents(providerName, response, signal)) {
    const data = parseJsonObject(providerName, event.data, 'stream data') as AnthropicStreamEvent;
    for (const chunk of translator.push(data)) yield { chunk };
  }
  translator.end();
}

/** Anthropic's Messages API (`POST {base_url}/messages`). */
export function createAnthropicProvider(
  config: ProviderConfigOf<'anthropic'>,
  dependencies: ProviderDependencies,
): Provider {
  return createHttpProvider(
    {
      settings: config,
      parseError: parseAnthropicError,
      unsupportedParameters,
      request(call, stream, basePath) {
        const body = convertRequest(stripSignatures(call.request), {
          upstreamModel: call.model.upstreamModel,
          maxOutputTokens: call.model.maxOutputTokens,
          stream,
        });
        const headers: Record<string, string> = {
          'content-type': 'application/json',
          accept: stream ? 'text/event-stream' : 'application/json',
          'anthropic-version': config.version,
          ...config.headers,
        };
        if (config.beta.length > 0) headers['anthropic-beta'] = config.beta.join(',');
        if (config.apiKey) headers['x-api-key'] = config.apiKey;
        return { path: `${basePath}/messages`, headers, body: JSON.stringify(body) };
      },
      readCompletion(bytes) {
        const body = parseJsonObject(config.name, bytes.toString('utf8'));
        if (body.type === 'error') throw anthropicStreamError(config.name, body);
        if (!Array.isArray(body.content)) throw malformed(config.name, 'a response without content');
        return { completion: convertResponse(body as unknown as AnthropicResponse, nowSeconds()) };
      },
      readStream: (response, call) => translateStream(config.name, call.model.upstreamModel, response, call.signal),
      // Messages requests from Anthropic clients go as they came, with the client's protocol headers and our key.
      forwarding: {
        apis: ['messages', 'messages/count_tokens'],
        headers(call) {
          const beta = call.headers['anthropic-beta'] ?? (config.beta.length > 0 ? config.beta.join(',') : undefined);
          const headers: Record<string, string> = {
            'content-type': 'application/json',
            accept: call.stream ? 'text/event-stream' : 'application/json',
            'anthropic-version': call.headers['anthropic-version'] ?? config.version,
            ...config.headers,
          };
          if (beta) headers['anthropic-beta'] = beta;
          if (config.apiKey) headers['x-api-key'] = config.apiKey;
          return headers;
        },
      },
    },
    dependencies,
  );
}
