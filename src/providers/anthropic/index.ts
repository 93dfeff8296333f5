import type { ProviderConfigOf } from '../../config/schema.js';
import { checkShape } from '../check-shape.js';
import { malformed, parseJsonObject, translateEvents } from '../http.js';
import { createHttpProvider } from '../http-provider.js';
import type { Provider, ProviderDependencies } from '../provider.js';
import { stripSignatures } from '../tool-call-id.js';
import { convertRequest, replacedValues, unsupportedParameters } from './convert-request.js';
import { convertResponse } from './convert-response.js';
import { forwardHeaders } from './forward-headers.js';
import { anthropicStreamError, parseAnthropicError } from './parse-error.js';
import { anthropicResponseShape } from './response-shape.js';
import { thinkingStyleOf } from './thinking-style.js';
import { type AnthropicStreamEvent, createAnthropicStreamTranslator } from './translate-stream.js';
import type { AnthropicResponse } from './wire-types.js';

const nowSeconds = () => Math.floor(Date.now() / 1000);

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
      replacedValues,
      request(call, stream, basePath) {
        const body = convertRequest(stripSignatures(call.request), {
          upstreamModel: call.model.upstreamModel,
          maxOutputTokens: call.model.maxOutputTokens,
          stream,
          thinkingStyle: thinkingStyleOf(call.model),
          model: call.model,
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
        checkShape(config.name, anthropicResponseShape, body, 'a response');
        return { completion: convertResponse(body as unknown as AnthropicResponse, nowSeconds()) };
      },
      readStream: (response, call) =>
        translateEvents<AnthropicStreamEvent>(
          config.name,
          response,
          createAnthropicStreamTranslator(config.name, call.model.upstreamModel, nowSeconds()),
        ),
      // Messages requests from Anthropic clients go as they came, with the client's protocol headers and our key.
      forwarding: {
        apis: ['messages', 'messages/count_tokens'],
        headers: (call) => forwardHeaders(config, call),
      },
    },
    dependencies,
  );
}
