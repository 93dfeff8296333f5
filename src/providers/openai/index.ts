import type { OpenAiProviderConfig } from '../../config/schema.js';
import { synthesizeChunks } from '../../openai/synthesize-stream.js';
import type { ChatCompletion } from '../../openai/types.js';
import { ApiError } from '../../server/errors.js';
import { classifyUpstreamError, type UpstreamClient, type UpstreamResponse } from '../../upstream/client.js';
import { SseParser } from '../../upstream/sse.js';
import type {
  CompletionResult,
  Provider,
  ProviderCall,
  ProviderDependencies,
  StreamItem,
  StreamItems,
} from '../provider.js';
import { toProviderError } from '../upstream-error.js';
import { buildOpenAiChatRequest } from './build-request.js';
import { parseOpenAiError } from './parse-error.js';

/** Bodies of error responses are read up to this size; the rest is not worth holding in memory. */
const maxErrorBodyBytes = 64 * 1024;

async function readText(response: UpstreamResponse, limit = Number.POSITIVE_INFINITY): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of response.body) {
    size += (chunk as Buffer).length;
    if (size > limit) {
      response.body.destroy();
      break;
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function malformed(providerName: string, what: string): ApiError {
  return new ApiError({
    status: 502,
    type: 'server_error',
    code: 'upstream_malformed_response',
    message: `The upstream provider "${providerName}" sent ${what}.`,
  });
}

/** An `{"error":…}` object inside a 200 response or a stream: an error, never passed off as success. */
function errorInsideSuccess(providerName: string, body: Record<string, unknown>): ApiError {
  const status =
    typeof (body.error as { code?: unknown })?.code === 'number' ? Number((body.error as { code: number }).code) : 502;
  return parseOpenAiError(providerName, status >= 400 ? status : 502, {}, JSON.stringify(body));
}

function parseCompletion(providerName: string, text: string): ChatCompletion {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw malformed(providerName, 'a response that is not JSON');
  }
  if (body === null || typeof body !== 'object') throw malformed(providerName, 'a response that is not a JSON object');
  const object = body as Record<string, unknown>;
  if (!Array.isArray(object.choices)) {
    if (object.error !== undefined) throw errorInsideSuccess(providerName, object);
    throw malformed(providerName, 'a response without choices');
  }
  return object as unknown as ChatCompletion;
}

function isEventStream(response: UpstreamResponse): boolean {
  const type = response.headers['content-type'];
  return typeof type === 'string' && type.includes('text/event-stream');
}

async function* translateStream(
  providerName: string,
  response: UpstreamResponse,
  signal: AbortSignal,
): AsyncGenerator<StreamItem> {
  const parser = new SseParser();
  let done = false;
  let sawFinish = false;
  try {
    for await (const bytes of response.body) {
      for (const event of parser.push(bytes as Buffer)) {
        if (event.data === '[DONE]') {
          done = true;
          continue;
        }
        let chunk: ChatCompletion;
        try {
          chunk = JSON.parse(event.data) as ChatCompletion;
        } catch {
          throw malformed(providerName, 'stream data that is not JSON');
        }
        if (chunk === null || typeof chunk !== 'object')
          throw malformed(providerName, 'stream data that is not an object');
        if (!Array.isArray(chunk.choices)) {
          if ((chunk as Record<string, unknown>).error !== undefined)
            throw errorInsideSuccess(providerName, chunk as Record<string, unknown>);
          throw malformed(providerName, 'a stream chunk without choices');
        }
        for (const choice of chunk.choices) if (choice?.finish_reason) sawFinish = true;
        yield { chunk, raw: event.data };
      }
      if (done) break;
    }
  } catch (error) {
    if (error instanceof ApiError) throw error;
    throw toProviderError(providerName, classifyUpstreamError(error, signal));
  } finally {
    if (!response.body.destroyed) response.body.destroy();
  }
  if (!done && !sawFinish) {
    throw malformed(providerName, 'a stream that ended before it was finished');
  }
}

/** Any OpenAI-compatible server: OpenAI, vLLM, Ollama, llama.cpp server, Groq, Together, Mistral, DeepSeek, … */
export function createOpenAiProvider(config: OpenAiProviderConfig, dependencies: ProviderDependencies): Provider {
  const url = new URL(config.baseUrl);
  const origin = url.origin;
  const basePath = url.pathname.replace(/\/+$/, '');
  const upstream: UpstreamClient = dependencies.upstream;

  async function send(call: ProviderCall): Promise<UpstreamResponse> {
    const request = buildOpenAiChatRequest(call, config, basePath);
    let response: UpstreamResponse;
    try {
      response = await upstream.send({
        origin,
        path: request.path,
        method: 'POST',
        headers: request.headers,
        body: request.body,
        signal: call.signal,
        timeouts: config.timeouts,
        maxConnections: config.maxConnections,
      });
    } catch (error) {
      throw toProviderError(config.name, error);
    }
    if (response.statusCode >= 400 || response.statusCode < 200) {
      const text = await readText(response, maxErrorBodyBytes).catch(() => '');
      throw parseOpenAiError(config.name, response.statusCode, response.headers, text);
    }
    return response;
  }

  return {
    name: config.name,
    type: config.type,

    async complete(call: ProviderCall): Promise<CompletionResult> {
      const response = await send(call);
      let text: string;
      try {
        text = await readText(response);
      } catch (error) {
        throw toProviderError(config.name, classifyUpstreamError(error, call.signal));
      }
      return { completion: parseCompletion(config.name, text), raw: text };
    },

    async stream(call: ProviderCall): Promise<StreamItems> {
      const response = await send(call);
      if (isEventStream(response)) return translateStream(config.name, response, call.signal);
      // The upstream ignored stream: true and answered with one JSON completion: stream it ourselves.
      let text: string;
      try {
        text = await readText(response);
      } catch (error) {
        throw toProviderError(config.name, classifyUpstreamError(error, call.signal));
      }
      return synthesizeChunks(parseCompletion(config.name, text)).map((chunk) => ({ chunk }));
    },
  };
}
