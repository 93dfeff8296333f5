import type { ProviderConfigOf } from '../../config/schema.js';
import type { CancelSignal } from '../../server/cancellation.js';
import type { UpstreamHeaders, UpstreamResponse } from '../../upstream/client.js';
import { parseJsonObject, postForBody, postUpstream, sseEvents, type UpstreamPost } from '../http.js';
import type { CompletionResult, Provider, ProviderCall, ProviderDependencies, StreamItem } from '../provider.js';
import { convertRequest, unsupportedParameters } from './convert-request.js';
import { convertResponse } from './convert-response.js';
import { geminiErrorInBody, parseGeminiError } from './parse-error.js';
import { createGeminiStreamTranslator } from './translate-stream.js';
import type { GeminiResponse } from './wire-types.js';

const nowSeconds = () => Math.floor(Date.now() / 1000);

/** `models/{name}` unless the configured name already is a resource path (models/…, tunedModels/…). */
function modelPath(upstreamModel: string): string {
  return upstreamModel.includes('/') ? upstreamModel : `models/${upstreamModel}`;
}

async function* translateStream(
  providerName: string,
  upstreamModel: string,
  response: UpstreamResponse,
  signal: CancelSignal,
): AsyncGenerator<StreamItem> {
  const translator = createGeminiStreamTranslator(providerName, upstreamModel, nowSeconds());
  for await (const event of sseEvents(providerName, response, signal)) {
    const data = parseJsonObject(providerName, event.data, 'stream data') as GeminiResponse;
    for (const chunk of translator.push(data)) yield { chunk };
  }
  for (const chunk of translator.end()) yield { chunk };
}

/** Google's Gemini API: `POST {base_url}/models/{model}:generateContent` and `:streamGenerateContent?alt=sse`. */
export function createGeminiProvider(config: ProviderConfigOf<'gemini'>, dependencies: ProviderDependencies): Provider {
  const url = new URL(config.baseUrl);
  const origin = url.origin;
  const basePath = url.pathname.replace(/\/+$/, '');
  const parseError = (status: number, headers: UpstreamHeaders, text: string) =>
    parseGeminiError(config.name, status, headers, text);

  function post(call: ProviderCall, stream: boolean): UpstreamPost {
    const method = stream ? 'streamGenerateContent?alt=sse' : 'generateContent';
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: stream ? 'text/event-stream' : 'application/json',
      ...config.headers,
    };
    if (config.apiKey) headers['x-goog-api-key'] = config.apiKey;
    return {
      origin,
      path: `${basePath}/${modelPath(call.model.upstreamModel)}:${method}`,
      headers,
      body: JSON.stringify(convertRequest(call.request)),
      signal: call.signal,
      timeouts: call.timeouts,
      maxConnections: config.maxConnections,
    };
  }

  return {
    name: config.name,
    type: config.type,
    unsupportedParameters,

    async complete(call: ProviderCall): Promise<CompletionResult> {
      return postForBody(dependencies.upstream, config.name, post(call, false), parseError, (bytes) => {
        const body = parseJsonObject(config.name, bytes.toString('utf8'));
        if (body.error !== undefined) throw geminiErrorInBody(config.name, body);
        return { completion: convertResponse(body as GeminiResponse, call.model.upstreamModel, nowSeconds()) };
      });
    },

    async stream(call: ProviderCall) {
      const response = await postUpstream(dependencies.upstream, config.name, post(call, true), parseError);
      return translateStream(config.name, call.model.upstreamModel, response, call.signal);
    },
  };
}
