import type { ProviderConfigOf } from '../../config/schema.js';
import type { CancelSignal } from '../../server/cancellation.js';
import type { UpstreamResponse } from '../../upstream/client.js';
import { parseJsonObject, sseEvents } from '../http.js';
import { createHttpProvider } from '../http-provider.js';
import type { Provider, ProviderDependencies, StreamItem } from '../provider.js';
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
  return createHttpProvider(
    {
      settings: config,
      parseError: parseGeminiError,
      unsupportedParameters,
      request(call, stream, basePath) {
        const method = stream ? 'streamGenerateContent?alt=sse' : 'generateContent';
        const headers: Record<string, string> = {
          'content-type': 'application/json',
          accept: stream ? 'text/event-stream' : 'application/json',
          ...config.headers,
        };
        if (config.apiKey) headers['x-goog-api-key'] = config.apiKey;
        return {
          path: `${basePath}/${modelPath(call.model.upstreamModel)}:${method}`,
          headers,
          body: JSON.stringify(convertRequest(call.request)),
        };
      },
      readCompletion(bytes, call) {
        const body = parseJsonObject(config.name, bytes.toString('utf8'));
        if (body.error !== undefined) throw geminiErrorInBody(config.name, body);
        return { completion: convertResponse(body as GeminiResponse, call.model.upstreamModel, nowSeconds()) };
      },
      readStream: (response, call) => translateStream(config.name, call.model.upstreamModel, response, call.signal),
    },
    dependencies,
  );
}
