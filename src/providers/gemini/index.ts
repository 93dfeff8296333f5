import type { ProviderConfigOf } from '../../config/schema.js';
import { parseJsonObject, translateEvents } from '../http.js';
import { createHttpProvider } from '../http-provider.js';
import type { Provider, ProviderDependencies } from '../provider.js';
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
      readStream: (response, call) =>
        translateEvents<GeminiResponse>(
          config.name,
          response,
          call.signal,
          createGeminiStreamTranslator(config.name, call.model.upstreamModel, nowSeconds()),
        ),
    },
    dependencies,
  );
}
