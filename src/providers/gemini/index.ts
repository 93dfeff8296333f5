import type { ProviderConfigOf } from '../../config/schema.js';
import { Cancellation } from '../../server/cancellation.js';
import { checkShape } from '../check-shape.js';
import { parseJsonObject, translateEvents } from '../http.js';
import { createHttpProvider, type HttpTransport } from '../http-provider.js';
import type { EmbeddingCall, EmbeddingResult, Provider, ProviderDependencies } from '../provider.js';
import {
  type BatchEmbedAnswer,
  geminiEmbeddingRefusal,
  readBatchEmbedAnswer,
  toBatchEmbedRequests,
  toEmbeddingList,
} from './convert-embeddings.js';
import { convertRequest, replacedValues, unsupportedParameters } from './convert-request.js';
import { convertResponse } from './convert-response.js';
import { modelPath } from './model-path.js';
import { geminiErrorInBody, parseGeminiError } from './parse-error.js';
import { geminiResponseShape } from './response-shape.js';
import { geminiThinking } from './thinking.js';
import { createGeminiStreamTranslator } from './translate-stream.js';
import type { GeminiResponse } from './wire-types.js';

const nowSeconds = () => Math.floor(Date.now() / 1000);

/** Batch calls of one embeddings request sent at the same time (a request of 2048 inputs is 21 calls). */
const parallelBatches = 4;

async function embedWithGemini(
  providerName: string,
  headers: Readonly<Record<string, string>>,
  call: EmbeddingCall,
  transport: HttpTransport,
): Promise<EmbeddingResult> {
  const path = `${transport.basePath}/${modelPath(call.model.upstreamModel)}:batchEmbedContents`;
  const batches = toBatchEmbedRequests(call.request, call.model.upstreamModel);
  const answers: BatchEmbedAnswer[] = [];
  // The batches' own signal: the client's going away stops them all, and so does one batch failing (the others'
  // answers could no longer be used, and would hold their connections and spend the upstream's quota).
  const batchesStop = new Cancellation();
  const stopWithClient = () => batchesStop.abort(call.signal.reason);
  if (call.signal.aborted) stopWithClient();
  else call.signal.addEventListener('abort', stopWithClient);
  const batchCall = { ...call, signal: batchesStop };
  const stopOthers = (error: unknown): never => {
    batchesStop.abort(error);
    throw error;
  };
  try {
    // A few at a time, in order: a failed batch fails the request before the rest are sent.
    for (let start = 0; start < batches.length; start += parallelBatches) {
      const window = batches
        .slice(start, start + parallelBatches)
        .map((batch) =>
          transport
            .postForBody({ path, headers, body: JSON.stringify(batch) }, batchCall, (bytes) =>
              readBatchEmbedAnswer(providerName, bytes, batch.requests.length),
            )
            .catch(stopOthers),
        );
      // The first failure is the answer (the aborted others' rejections come after it, and are not).
      answers.push(...(await Promise.all(window)));
    }
  } finally {
    call.signal.removeEventListener('abort', stopWithClient);
  }
  return { list: toEmbeddingList(call.request.model, answers) };
}

/** Google's Gemini API: `POST {base_url}/models/{model}:generateContent` and `:streamGenerateContent?alt=sse`. */
export function createGeminiProvider(config: ProviderConfigOf<'gemini'>, dependencies: ProviderDependencies): Provider {
  const embeddingHeaders: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json',
    ...config.headers,
  };
  if (config.apiKey) embeddingHeaders['x-goog-api-key'] = config.apiKey;
  return createHttpProvider(
    {
      settings: config,
      parseError: parseGeminiError,
      unsupportedParameters,
      replacedValues,
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
          body: JSON.stringify(convertRequest(call.request, geminiThinking(call.model))),
        };
      },
      readCompletion(bytes, call) {
        const body = parseJsonObject(config.name, bytes.toString('utf8'));
        if (body.error !== undefined) throw geminiErrorInBody(config.name, body);
        checkShape(config.name, geminiResponseShape, body, 'a response');
        return { completion: convertResponse(body as GeminiResponse, call.model.upstreamModel, nowSeconds()) };
      },
      readStream: (response, call) =>
        translateEvents<GeminiResponse>(
          config.name,
          response,
          createGeminiStreamTranslator(config.name, call.model.upstreamModel, nowSeconds()),
        ),
      embed: (call, transport) => embedWithGemini(config.name, embeddingHeaders, call, transport),
      embeddingRefusal: geminiEmbeddingRefusal,
    },
    dependencies,
  );
}
