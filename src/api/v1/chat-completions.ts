import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ModelPricing } from '../../config/schema.js';
import { ApiError, apiError, modelNotFound, toApiError } from '../../errors/api-error.js';
import { openAiStreamError } from '../../errors/render-openai.js';
import { type Admission, admittedWithoutLimits } from '../../limits/limiter.js';
import { chunkHasContent, createChunkNormalizer, generatedCharacters } from '../../openai/normalize-chunk.js';
import type { ChatCompletion, ChatCompletionRequest } from '../../openai/types.js';
import { validateChatRequest } from '../../openai/validate-chat-request.js';
import type { RequestRecord } from '../../request-log/record.js';
import { type DispatchTrace, lastDeploymentAttempt, newTrace } from '../../routing/dispatch.js';
import type { CancelSignal } from '../../server/cancellation.js';
import { readJsonBody } from '../../server/read-body.js';
import { sseData, sseDone, sseHeaders, sseKeepalive } from '../../upstream/sse.js';
import {
  costOf,
  estimatePromptCharacters,
  estimateUsage,
  readUsage,
  type TokenUsage,
  toWireUsage,
} from '../../usage/usage.js';
import type { DataPlaneServices } from './services.js';

/** POST /v1/chat/completions: validate, authorize the model, dispatch, and answer as JSON or as an SSE stream. */
export async function handleChatCompletions(
  request: IncomingMessage,
  response: ServerResponse,
  record: RequestRecord,
  services: DataPlaneServices,
  signal: CancelSignal,
): Promise<void> {
  const principal = record.principal;
  if (!principal) throw new Error('chat completions reached without a principal');
  // Only through `dispatch` from here: a variable of this function holding the request would keep it as long as the
  // stream lasts (see readDispatch and streamChat).
  const dispatch = await readDispatch(request, record, services, signal, principal);
  const trace = dispatch.trace;
  // Keys without limits (the usual case) are admitted without a promise or a lookup.
  const admission =
    principal.limitSubjects.length === 0
      ? admittedWithoutLimits
      : await admit(requestOf(dispatch), record, services, dispatch.pricing());
  for (const name in admission.headers) response.setHeader(name, admission.headers[name] as string);
  try {
    if (record.stream) await streamChat(response, record, services, dispatch);
    else await completeChat(response, record, services, dispatch);
  } finally {
    const attempted = trace.served ?? lastDeploymentAttempt(trace);
    record.provider = attempted?.provider;
    record.upstreamModel = attempted?.upstreamModel;
    // Nothing generated, nothing billed: a failed request with known prices costs 0, not "unknown".
    const pricing = dispatch.pricing();
    if (record.costUsd === undefined && record.usage === undefined && pricing) record.costUsd = 0;
    // The reservation becomes what was really used (nothing, when the upstream refused the request).
    admission.settle({ tokens: record.usage?.totalTokens ?? 0, costUsd: record.costUsd ?? 0 });
  }
}

/**
 * Reads and checks the request, and what dispatch needs of it. A function of its own so that the body as read (its
 * text, bytes and parsed value) is not a variable of handleChatCompletions: V8 keeps an async function's variables
 * while it waits, and that one waits as long as the stream lasts (a 100 KB prompt was held three more times over per
 * open stream).
 */
async function readDispatch(
  request: IncomingMessage,
  record: RequestRecord,
  services: DataPlaneServices,
  signal: CancelSignal,
  principal: NonNullable<RequestRecord['principal']>,
): Promise<Dispatch> {
  const body = await readJsonBody(request, services.config.limits.maxBodyBytes, signal);
  if (principal.logBodies) record.requestBody = body.text;
  const chatRequest = validateChatRequest(body.value);
  record.model = chatRequest.model.slice(0, 256);
  record.stream = chatRequest.stream === true;
  // The same policy that produced /v1/models; unknown and forbidden models get the same 404.
  if (!principal.modelSet.has(chatRequest.model)) throw modelNotFound(chatRequest.model);
  const route = services.router.resolve(chatRequest.model);
  // Dispatch (src/routing/) picks deployments, retries and fails over; the trace records every attempt for the log.
  const trace = newTrace();
  record.routing = trace;
  return {
    request: chatRequest,
    body: body.forwardable ? body.bytes : undefined,
    trace,
    signal,
    // Before dispatch, the requested model's prices (what admission reserves against).
    pricing: () => trace.served?.pricing ?? route.model.pricing,
  };
}

/**
 * Rate limits and budgets of the key and its account: tokens and cost are reserved from an estimate (the prompt,
 * plus max_tokens or the configured completion reserve for each choice) and settled from the real usage.
 */
async function admit(
  request: ChatCompletionRequest,
  record: RequestRecord,
  services: DataPlaneServices,
  pricing: ModelPricing | undefined,
): Promise<Admission> {
  const principal = record.principal as NonNullable<RequestRecord['principal']>;
  const promptTokens = estimateUsage(estimatePromptCharacters(request), 0).promptTokens;
  const completionLimit =
    request.max_completion_tokens ?? request.max_tokens ?? services.config.limits.completionTokenReserve;
  const choices = typeof request.n === 'number' && request.n > 1 ? request.n : 1;
  const completionTokens = completionLimit * choices;
  const estimatedCostUsd =
    costOf(
      {
        promptTokens,
        completionTokens,
        totalTokens: promptTokens + completionTokens,
        cachedTokens: 0,
        cacheWriteTokens: 0,
        reasoningTokens: 0,
        estimated: true,
      },
      pricing,
    ) ?? 0;
  try {
    const admission = await services.limiter.admit({
      partition: principal.accountId,
      subjects: principal.limitSubjects,
      estimatedTokens: promptTokens + completionTokens,
      estimatedCostUsd,
    });
    services.metrics.limiterDecisions.inc({ decision: 'admitted', limit: 'none' });
    return admission;
  } catch (error) {
    if (error instanceof ApiError) {
      const decision =
        error.status === 503 ? 'unavailable' : error.type === 'insufficient_quota' ? 'quota_exceeded' : 'rate_limited';
      services.metrics.limiterDecisions.inc({ decision, limit: error.type });
    }
    throw error;
  }
}

/** One request on its way through dispatch. */
interface Dispatch {
  /** The parsed request. A stream lets go of it once under way: only its size is needed then (promptCharacters). */
  request: ChatCompletionRequest | undefined;
  /** The prompt's size in characters, for an estimate of usage; set when the request has been let go of. */
  promptCharacters?: number;
  /** The client's bytes, when they may be forwarded unchanged (see ProviderCall.body). */
  body: Buffer | undefined;
  trace: DispatchTrace;
  signal: CancelSignal;
  /** The prices of whatever served the request (a deployment or fallback may have its own). */
  pricing: () => ModelPricing | undefined;
}

function requestOf(dispatch: Dispatch): ChatCompletionRequest {
  if (!dispatch.request) throw new Error('the request was used after it had been let go of');
  return dispatch.request;
}

function settleUsage(
  record: RequestRecord,
  dispatch: Dispatch,
  reported: TokenUsage | undefined,
  completionCharacters: number,
): TokenUsage {
  // An upstream that reports no usage is logged with an estimate, marked as such, never as zero.
  const usage =
    reported ??
    estimateUsage(dispatch.promptCharacters ?? estimatePromptCharacters(requestOf(dispatch)), completionCharacters);
  record.usage = usage;
  record.costUsd = costOf(usage, dispatch.pricing());
  return usage;
}

function announceDroppedParameters(response: ServerResponse, trace: DispatchTrace): void {
  if (trace.droppedParameters.length > 0 && !response.headersSent) {
    response.setHeader('x-switchboard-dropped-parameters', trace.droppedParameters.join(', '));
  }
}

async function completeChat(
  response: ServerResponse,
  record: RequestRecord,
  services: DataPlaneServices,
  dispatch: Dispatch,
): Promise<void> {
  const result = await services.dispatcher.complete(
    requestOf(dispatch),
    dispatch.signal,
    dispatch.trace,
    record.principal?.accountId,
    dispatch.body,
  );
  const reported = readUsage(result.usage ?? result.completion.usage);
  // Characters are counted only for an estimate (an upstream that reported no usage).
  const usage = settleUsage(record, dispatch, reported, reported ? 0 : generatedCharacters(result.completion));
  let body: Buffer | string | undefined = result.raw;
  if (!reported) {
    // Nothing reported: the client gets the estimate the log keeps (marked estimated), never a missing usage.
    result.completion.usage = toWireUsage(usage);
    body = undefined;
  }
  body ??= JSON.stringify(result.completion);
  announceDroppedParameters(response, dispatch.trace);
  response.writeHead(200, {
    'x-request-id': record.requestId,
    'content-type': 'application/json',
    'content-length': typeof body === 'string' ? Buffer.byteLength(body) : body.length,
  });
  response.end(body);
  record.status = 200;
  record.outcome = 'success';
  if (record.principal?.logBodies) record.responseBody = body.toString();
}

/** Resolves when the response can take more data, or when the client is gone. */
function drained(response: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      response.off('drain', done);
      response.off('close', done);
      resolve();
    };
    response.on('drain', done);
    response.on('close', done);
  });
}

async function streamChat(
  response: ServerResponse,
  record: RequestRecord,
  services: DataPlaneServices,
  dispatch: Dispatch,
): Promise<void> {
  const includeUsage = requestOf(dispatch).stream_options?.include_usage === true;
  const keepBody = record.principal?.logBodies === true;
  const loggedEvents: string[] = [];
  let started = false;

  const start = () => {
    if (started) return;
    started = true;
    record.status = 200;
    response.writeHead(200, { 'x-request-id': record.requestId, ...sseHeaders });
  };
  const write = async (text: string) => {
    if (response.destroyed) return;
    if (keepBody) loggedEvents.push(text);
    if (!response.write(text)) await drained(response);
    keepalive.refresh();
  };
  // While the upstream is silent (still thinking, or not yet answering), comments keep proxies and clients from
  // timing out. The first one commits the response to 200: later failures are reported in-band.
  const keepalive = setTimeout(function sendKeepalive() {
    if (response.destroyed) return;
    start();
    response.write(sseKeepalive);
    keepalive.refresh();
  }, services.config.server.streamKeepaliveMs);

  let completionCharacters = 0;
  let reported: TokenUsage | undefined;
  let lastChunk: ChatCompletion | undefined;
  try {
    // Resolves once the stream has produced content (or ended): until then, failures fail over.
    const items = await services.dispatcher.stream(
      requestOf(dispatch),
      dispatch.signal,
      dispatch.trace,
      record.principal?.accountId,
      dispatch.body,
    );
    // Past this point nothing fails over, so neither the client's bytes nor the parsed request (each the size of the
    // prompt) need live as long as the stream does; an estimate of usage needs only the prompt's size.
    dispatch.body = undefined;
    dispatch.promptCharacters = estimatePromptCharacters(requestOf(dispatch));
    dispatch.request = undefined;
    announceDroppedParameters(response, dispatch.trace);
    start();
    const normalize = createChunkNormalizer();
    for await (const item of items) {
      const chunk = item.chunk;
      let raw = item.raw;
      lastChunk = chunk;
      if (normalize(chunk)) raw = undefined;
      if (record.firstTokenAt === undefined && chunkHasContent(chunk)) record.firstTokenAt = performance.now();
      completionCharacters += generatedCharacters(chunk);
      if (chunk.usage) {
        reported = readUsage(chunk.usage) ?? reported;
        // Usage is always requested upstream (for the log and limits); the client sees it only if it asked.
        if (!includeUsage) {
          if (chunk.choices.length === 0) continue;
          chunk.usage = undefined;
          raw = undefined;
        }
      }
      await write(sseData(raw ?? JSON.stringify(chunk)));
    }
    const usage = settleUsage(record, dispatch, reported, completionCharacters);
    if (includeUsage && !reported && lastChunk) {
      await write(sseData(JSON.stringify({ ...lastChunk, choices: [], usage: toWireUsage(usage) })));
    }
    await write(sseDone);
    response.end();
    record.outcome = 'success';
  } catch (error) {
    // Tokens were spent only if something was generated; otherwise the row costs 0 (see above).
    if (reported || completionCharacters > 0) settleUsage(record, dispatch, reported, completionCharacters);
    // Before the first byte, errors are ordinary HTTP errors; a client that left cannot be told anything.
    if (!started || response.destroyed) throw error;
    const apiError = dispatch.signal.aborted ? abortedError(dispatch.signal.reason) : toApiError(error);
    // Mid-stream failure: an in-band error, then [DONE]; never a clean-looking finish.
    await write(openAiStreamError(apiError));
    await write(sseDone);
    response.end();
    record.outcome = 'error';
    record.error = apiError;
    record.status = apiError.status;
  } finally {
    clearTimeout(keepalive);
    if (keepBody) record.responseBody = loggedEvents.join('');
  }
}

/** Why the gateway itself cut a stream short (the reason given to the AbortController in data-plane.ts). */
function abortedError(reason: unknown): ApiError {
  if (reason instanceof ApiError) return reason;
  return apiError('service_unavailable', 'The request was interrupted.');
}
