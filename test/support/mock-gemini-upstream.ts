import type { ServerResponse } from 'node:http';
import { mockEmbedding, mockInputTokens } from './mock-openai-embeddings.js';
import { type RecordedRequest, sendJson, sleep, splitIntoPieces, startMockServer, weatherCall } from './mock-server.js';

/**
 * A real HTTP server speaking the Gemini API (v1beta `models/{model}:generateContent` and
 * `:streamGenerateContent?alt=sse`) as googleapis/python-genai and the API reference describe it: camelCase
 * GenerateContentResponse objects, `data:` events with CRLF framing and no [DONE], functionCall parts with a
 * thoughtSignature (Gemini 3), usageMetadata with thoughts counted apart from candidates, and Google's error body
 * `{"error":{code,message,status,details}}` (a 429 carries RetryInfo.retryDelay). Like the real API it refuses what it
 * would refuse: roles other than user/model, empty parts, a function call sent back without the signature it was
 * issued with (Gemini 3's check), function responses that do not answer the preceding calls one for one, and, for
 * models named as real ones (`gemini-2.5-flash`, `gemini-3-pro-preview`, …), a `thinkingConfig` the model cannot take:
 * any on a model that does not think (Gemini 2.0, Gemma, 2.5 Flash Image), a budget outside the model's range (2.5 Pro
 * cannot stop thinking), a level on 2.5 or one the Gemini 3 model does not accept, a budget and a level together.
 *
 * Behaviour is chosen by the model in the path: `mock` echoes; `tools` calls get_weather, then answers from the
 * function response; text answers start with a thought summary (a `thought: true` part) when the request asks for
 * one with `thinkingConfig.includeThoughts`, as thinking models do; `no-usage` answers without usageMetadata;
 * `error-NNN`, `hang`, `reset`, `midstream-error`, `midstream-reset` misbehave on purpose.
 *
 * `models/{model}:batchEmbedContents` answers one vector per request (mockEmbedding of its text, outputDimensionality
 * long), refusing batches of more than 100 and requests naming another model, as the API does; `embed-usage` reports
 * usageMetadata.promptTokenCount (newer embedding models do), other models report no usage, like the older ones.
 */

export interface MockGeminiUpstream {
  url: string;
  /** base_url for a provider of type gemini. */
  baseUrl: string;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

/** The signature the mock issues with its function call, base64 as Gemini sends them. */
export const mockThoughtSignature = Buffer.from('mock-thought-signature/+=').toString('base64');

const statuses: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
};

function googleError(code: number, message: string, details?: unknown[]) {
  return { error: { code, message, status: statuses[code] ?? 'UNKNOWN', ...(details ? { details } : {}) } };
}

type Part = Record<string, unknown>;
type Content = { role?: string; parts?: Part[] };

function validate(body: Record<string, unknown>): string | undefined {
  const contents = body.contents as Content[] | undefined;
  if (!Array.isArray(contents) || contents.length === 0)
    return '* GenerateContentRequest.contents: contents is not specified';
  let pendingCalls = 0;
  for (const [index, content] of contents.entries()) {
    if (content.role !== 'user' && content.role !== 'model') {
      return `Please use a valid role: user, model. (contents[${index}].role: ${String(content.role)})`;
    }
    const parts = content.parts ?? [];
    if (parts.length === 0)
      return `* GenerateContentRequest.contents[${index}].parts: contents.parts must not be empty.`;
    const responses = parts.filter((part) => part.functionResponse).length;
    if (pendingCalls > 0 && responses !== pendingCalls) {
      return 'Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.';
    }
    pendingCalls = 0;
    for (const part of parts) {
      if (part.functionResponse) {
        const response = part.functionResponse as { name?: unknown; response?: unknown };
        if (typeof response.name !== 'string' || !response.name) {
          return `* GenerateContentRequest.contents[${index}].parts.function_response.name: Name cannot be empty.`;
        }
        if (!response.response || typeof response.response !== 'object') {
          return `* GenerateContentRequest.contents[${index}].parts.function_response.response: must be an object.`;
        }
      }
      if (part.functionCall) {
        pendingCalls++;
        const signature = part.thoughtSignature;
        const firstCall = parts.find((candidate) => candidate.functionCall) === part;
        if (firstCall && signature !== mockThoughtSignature && signature !== 'skip_thought_signature_validator') {
          return 'Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly.';
        }
      }
    }
  }
  const config = (body.generationConfig ?? {}) as Record<string, unknown>;
  if (config.responseJsonSchema && config.responseMimeType !== 'application/json') {
    return 'responseMimeType must be application/json when responseJsonSchema is set.';
  }
  return undefined;
}

type MockThinking =
  | { kind: 'none' }
  | { kind: 'fixed' }
  | { kind: 'budget'; minimum: number; maximum: number; canTurnOff: boolean }
  | { kind: 'level'; levels: string[] };

/**
 * The thinking of the real models this mock is asked for by name, from Google's thinking guide (other names, `mock`,
 * `tools`, …, take any thinkingConfig, as before).
 */
function mockThinkingOf(model: string): MockThinking | undefined {
  if (/^gemma-|^gemini-1\.|^gemini-2\.0-|^gemini-2\.5-flash-image|-tts$/.test(model)) {
    return model.includes('-thinking') ? { kind: 'fixed' } : { kind: 'none' };
  }
  if (model.startsWith('gemini-2.5-pro')) return { kind: 'budget', minimum: 128, maximum: 32768, canTurnOff: false };
  if (model.startsWith('gemini-2.5-flash-lite')) {
    return { kind: 'budget', minimum: 512, maximum: 24576, canTurnOff: true };
  }
  if (model.startsWith('gemini-2.5-flash')) return { kind: 'budget', minimum: 1, maximum: 24576, canTurnOff: true };
  if (model.startsWith('gemini-3-pro-image')) return { kind: 'fixed' };
  if (model.startsWith('gemini-3-pro')) return { kind: 'level', levels: ['low', 'high'] };
  if (model.startsWith('gemini-3.1-pro')) return { kind: 'level', levels: ['low', 'medium', 'high'] };
  if (/^gemini-3\.[78]-flash/.test(model)) return { kind: 'level', levels: ['low', 'medium', 'high'] };
  if (/^gemini-3(\.\d+)?-flash/.test(model)) return { kind: 'level', levels: ['minimal', 'low', 'medium', 'high'] };
  return undefined;
}

/** What the Gemini API answers 400 to in `thinkingConfig`, for the model asked. */
function thinkingRefusal(model: string, body: Record<string, unknown>): string | undefined {
  const config = (body.generationConfig as { thinkingConfig?: Record<string, unknown> } | undefined)?.thinkingConfig;
  const thinking = mockThinkingOf(model);
  if (!config || !thinking) return undefined;
  const { thinkingBudget: budget, thinkingLevel: level } = config;
  if (thinking.kind === 'none') return 'Thinking is not supported for this model.';
  if (budget !== undefined && level !== undefined) {
    return 'thinking_budget and thinking_level are not supported together.';
  }
  if (thinking.kind === 'fixed') {
    if (budget !== undefined) return 'Thinking budget is not supported for this model.';
    if (level !== undefined) return 'Thinking level is not supported for this model.';
    return undefined;
  }
  if (thinking.kind === 'budget') {
    if (level !== undefined) return 'Thinking level is not supported for this model.';
    if (budget === undefined || budget === -1) return undefined;
    if (budget === 0 && !thinking.canTurnOff) return 'Budget 0 is invalid. This model only works in thinking mode.';
    const inRange = typeof budget === 'number' && budget >= thinking.minimum && budget <= thinking.maximum;
    if (!(inRange || (budget === 0 && thinking.canTurnOff))) {
      return `The thinking budget (${String(budget)}) is invalid. Please choose a value between ${thinking.minimum} and ${thinking.maximum}.`;
    }
    return undefined;
  }
  if (level !== undefined && !thinking.levels.includes(String(level).toLowerCase())) {
    return `Thinking level ${String(level).toUpperCase()} is not supported for this model.`;
  }
  return undefined;
}

/** The Gemini API's cap on requests per batchEmbedContents call. */
export const geminiEmbedBatchCap = 100;

function answerBatchEmbed(out: ServerResponse, model: string, body: Record<string, unknown>) {
  const requests = body.requests as Array<Record<string, unknown>> | undefined;
  if (!Array.isArray(requests) || requests.length === 0) {
    return sendJson(out, 400, googleError(400, '* BatchEmbedContentsRequest.requests: requests is not specified'));
  }
  if (requests.length > geminiEmbedBatchCap) {
    return sendJson(
      out,
      400,
      googleError(
        400,
        `* BatchEmbedContentsRequest.requests: at most ${geminiEmbedBatchCap} requests can be in one batch`,
      ),
    );
  }
  const embeddings: Array<{ values: number[] }> = [];
  let tokens = 0;
  for (const [index, request] of requests.entries()) {
    if (request.model !== `models/${model}`) {
      return sendJson(
        out,
        400,
        googleError(
          400,
          `Model in request ${index} (${String(request.model)}) does not match the model of the batch (models/${model}).`,
        ),
      );
    }
    const text = (request.content as Content | undefined)?.parts?.[0]?.text;
    if (typeof text !== 'string' || text === '') {
      return sendJson(
        out,
        400,
        googleError(400, `* BatchEmbedContentsRequest.requests[${index}].content: contents is not specified`),
      );
    }
    const dimensions = typeof request.outputDimensionality === 'number' ? request.outputDimensionality : undefined;
    embeddings.push({ values: mockEmbedding(text, dimensions) });
    tokens += mockInputTokens(text);
  }
  return sendJson(
    out,
    200,
    model === 'embed-usage' ? { embeddings, usageMetadata: { promptTokenCount: tokens } } : { embeddings },
  );
}

function lastUserText(body: Record<string, unknown>): string {
  const contents = (body.contents ?? []) as Content[];
  const last = [...contents]
    .reverse()
    .find((content) => content.role === 'user' && content.parts?.some((part) => 'text' in part));
  return (last?.parts ?? [])
    .filter((part) => typeof part.text === 'string')
    .map((part) => part.text)
    .join(' ');
}

function lastFunctionResponse(body: Record<string, unknown>): unknown {
  const contents = (body.contents ?? []) as Content[];
  const last = contents.at(-1);
  return last?.parts?.find((part) => part.functionResponse)?.functionResponse;
}

function usageFor(body: Record<string, unknown>, output: string) {
  const prompt = Math.max(1, Math.ceil(JSON.stringify(body.contents ?? []).length / 4));
  const candidates = Math.max(1, Math.ceil(output.length / 4));
  return {
    promptTokenCount: prompt,
    candidatesTokenCount: candidates,
    totalTokenCount: prompt + candidates + 3,
    thoughtsTokenCount: 3,
    promptTokensDetails: [{ modality: 'TEXT', tokenCount: prompt }],
  };
}

interface Answer {
  texts: string[];
  call?: boolean;
}

function answerFor(model: string, body: Record<string, unknown>): Answer {
  if (model === 'tools' && Array.isArray(body.tools)) {
    const response = lastFunctionResponse(body) as { response?: unknown } | undefined;
    if (response) return { texts: [`The weather: ${JSON.stringify(response.response)}`] };
    return { texts: [], call: true };
  }
  const count = Number((body.generationConfig as { candidateCount?: unknown } | undefined)?.candidateCount ?? 1);
  return {
    texts: Array.from({ length: count }, (_, index) => `${index > 0 ? `(${index}) ` : ''}Echo: ${lastUserText(body)}`),
  };
}

/** A thinking model's thought summary, returned only when asked for (`thinkingConfig.includeThoughts`). */
export const mockThought = '**Reading the question**\n\nThe user wants an echo.';

function thoughtParts(body: Record<string, unknown>): Array<{ text: string; thought: true }> {
  const config = body.generationConfig as { thinkingConfig?: { includeThoughts?: unknown } } | undefined;
  return config?.thinkingConfig?.includeThoughts === true ? [{ text: mockThought, thought: true }] : [];
}

const callPart = () => ({
  functionCall: { name: weatherCall.name, args: weatherCall.arguments },
  thoughtSignature: mockThoughtSignature,
});

function response(model: string, body: Record<string, unknown>, answer: Answer) {
  const candidates = answer.call
    ? [{ content: { role: 'model', parts: [callPart()] }, finishReason: 'STOP', index: 0 }]
    : answer.texts.map((text, index) => ({
        content: { role: 'model', parts: [...thoughtParts(body), { text }] },
        finishReason: 'STOP',
        index,
      }));
  return {
    candidates,
    usageMetadata: usageFor(body, answer.texts.join('')),
    modelVersion: model,
    responseId: 'mockresponse123',
  };
}

interface StreamOptions {
  delayMs?: number;
  failAfter?: number;
  failure?: 'reset' | 'error-event';
}

async function stream(
  out: ServerResponse,
  model: string,
  body: Record<string, unknown>,
  answer: Answer,
  options: StreamOptions = {},
) {
  out.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const send = (event: Record<string, unknown>) => out.write(`data: ${JSON.stringify(event)}\r\n\r\n`);
  const usage = usageFor(body, answer.texts.join(''));
  const base = { modelVersion: model, responseId: 'mockstream123' };
  if (answer.call) {
    send({
      candidates: [{ content: { role: 'model', parts: [callPart()] }, index: 0 }],
      usageMetadata: usage,
      ...base,
    });
  } else {
    const thoughts = thoughtParts(body);
    if (thoughts.length > 0) send({ candidates: [{ content: { role: 'model', parts: thoughts }, index: 0 }], ...base });
    const text = answer.texts[0] ?? '';
    let sent = 0;
    for (const piece of splitIntoPieces(text)) {
      if (options.failAfter !== undefined && sent >= options.failAfter) {
        if (options.failure === 'reset') {
          out.socket?.destroy();
          return;
        }
        send(googleError(503, 'The model is overloaded. Please try again later.'));
        out.end();
        return;
      }
      if (options.delayMs) await sleep(options.delayMs);
      if (out.destroyed) return;
      send({
        candidates: [{ content: { role: 'model', parts: [{ text: piece }] }, index: 0 }],
        usageMetadata: usage,
        ...base,
      });
      sent++;
    }
  }
  send({
    candidates: [{ content: { role: 'model', parts: [{ text: '' }] }, finishReason: 'STOP', index: 0 }],
    usageMetadata: usage,
    ...base,
  });
  out.end();
}

export async function startMockGeminiUpstream(): Promise<MockGeminiUpstream> {
  const server = await startMockServer(async (request, out) => {
    const match =
      /^\/v1beta\/models\/([^:/]+):(generateContent|streamGenerateContent|batchEmbedContents)(\?alt=sse)?$/.exec(
        request.path,
      );
    if (request.method !== 'POST' || !match) return sendJson(out, 404, googleError(404, `Not found: ${request.path}`));
    if (typeof request.headers['x-goog-api-key'] !== 'string') {
      return sendJson(
        out,
        400,
        googleError(400, 'API key not valid. Please pass a valid API key.', [
          { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'API_KEY_INVALID' },
        ]),
      );
    }
    const model = decodeURIComponent(match[1] as string);
    const streaming = match[2] === 'streamGenerateContent';
    if (streaming && !match[3]) return sendJson(out, 400, googleError(400, 'this mock only streams with alt=sse'));
    const statusMatch = /^error-(\d{3})$/.exec(model);
    if (statusMatch) {
      const status = Number(statusMatch[1]);
      const details =
        status === 429 ? [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '7s' }] : undefined;
      return sendJson(out, status, googleError(status, `mock upstream error ${status}`, details));
    }
    if (match[2] === 'batchEmbedContents') {
      if (model === 'hang') return;
      return answerBatchEmbed(out, model, request.body);
    }
    const invalid = validate(request.body) ?? thinkingRefusal(model, request.body);
    if (invalid) return sendJson(out, 400, googleError(400, invalid));
    const answer = answerFor(model, request.body);
    switch (model) {
      case 'hang':
        return;
      case 'reset':
        out.socket?.destroy();
        return;
      case 'no-usage': {
        const body = response(model, request.body, answer) as Record<string, unknown>;
        delete body.usageMetadata;
        return sendJson(out, 200, body);
      }
      case 'midstream-error':
        return stream(out, model, request.body, answer, { failAfter: 2, failure: 'error-event', delayMs: 20 });
      case 'midstream-reset':
        return stream(out, model, request.body, answer, { failAfter: 2, failure: 'reset', delayMs: 20 });
      default:
        if (streaming) return stream(out, model, request.body, answer);
        return sendJson(out, 200, response(model, request.body, answer));
    }
  });
  return { url: server.url, baseUrl: `${server.url}/v1beta`, requests: server.requests, close: server.close };
}
