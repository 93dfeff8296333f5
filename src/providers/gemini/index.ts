import type { ProviderConfigOf } from '../../config/schema.js';
import type { UpstreamResponse } from '../../upstream/client.js';
import { parseJsonObject, postUpstream, readBody, sseEvents } from '../http.js';
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
  signal: AbortSignal,
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
  const parseError = (status: number, headers: Record<string, string | string[] | undefined>, text: string) =>
    parseGeminiError(config.name, status, headers, text);

  function send(call: ProviderCall, stream: boolean): Promise<UpstreamResponse> {
    const method = stream ? 'streamGenerateContent?alt=sse' : 'generateContent';
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: stream ? 'text/event-stream' : 'application/json',
      ...config.headers,
    };
    if (config.apiKey) headers['x-goog-api-key'] = config.apiKey;
    return postUpstream(
      dependencies.upstream,
      config.name,
      {
        origin,
        path: `${basePath}/${modelPath(call.model.upstreamModel)}:${method}`,
        headers,
        body: JSON.stringify(convertRequest(call.request)),
        signal: call.signal,
        timeouts: call.timeouts,
        maxConnections: config.maxConnections,
      },
      parseError,
    );
  }

  return {
    name: config.name,
    type: config.type,
    unsupportedParameters,

    async complete(call: ProviderCall): Promise<CompletionResult> {
      const response = await send(call, false);
      const body = parseJsonObject(config.name, await readBody(config.name, response, call.signal));
      if (body.error !== undefined) throw geminiErrorInBody(config.name, body);
      return { completion: convertResponse(body as GeminiResponse, call.model.upstreamModel, nowSeconds()) };
    },

    async stream(call: ProviderCall) {
      const response = await send(call, true);
      return translateStream(config.name, call.model.upstreamModel, response, call.signal);
    },
  };
}
