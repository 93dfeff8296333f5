import type { IncomingMessage, ServerResponse } from 'node:http';
import { chunkHasContent, createChunkNormalizer, generatedCharacters } from '../../openai/normalize-chunk.js';
import type { ChatCompletion, ChatCompletionRequest } from '../../openai/types.js';
import { validateChatRequest } from '../../openai/validate-chat-request.js';
import type { ProviderCall } from '../../providers/provider.js';
import type { RequestRecord } from '../../request-log/record.js';
import type { Deployment } from '../../routing/router.js';
import { ApiError, modelNotFound, renderStreamError, toApiError } from '../../server/errors.js';
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
  signal: AbortSignal,
): Promise<void> {
  const principal = record.principal;
  if (!principal) throw new Error('chat completions reached without a principal');
  const body = await readJsonBody(request, services.config.limits.maxBodyBytes);
  if (principal.logBodies) record.requestBody = body.text;
  const chatRequest = validateChatRequest(body.value);
  record.model = chatRequest.model.slice(0, 256);
  record.stream = chatRequest.stream === true;
  // The same policy that produced /v1/models; unknown and forbidden models get the same 404.
  if (!principal.modelSet.has(chatRequest.model)) throw modelNotFound(chatRequest.model);
  const deployment = services.router.resolve(chatRequest.model);
  record.provider = deployment.provider.name;
  record.upstreamModel = deployment.model.upstreamModel;
  const call: ProviderCall = { request: chatRequest, model: deployment.model, signal, accountId: principal.accountId };
  if (record.stream) await streamChat(response, record, services, deployment, call);
  else await completeChat(response, record, deployment, call);
}

function settleUsage(
  record: RequestRecord,
  deployment: Deployment,
  request: ChatCompletionRequest,
  reported: TokenUsage | undefined,
  completionCharacters: number,
): TokenUsage {
  // An upstream that reports no usage is logged with an estimate, marked as such, never as zero.
  const usage = reported ?? estimateUsage(estimatePromptCharacters(request), completionCharacters);
  record.usage = usage;
  record.costUsd = costOf(usage, deployment.model.pricing);
  return usage;
}

async function completeChat(
  response: ServerResponse,
  record: RequestRecord,
  deployment: Deployment,
  call: ProviderCall,
): Promise<void> {
  const result = await deployment.provider.complete(call);
  const reported = readUsage(result.completion.usage);
  let text = result.raw;
  const usage = settleUsage(record, deployment, call.request, reported, generatedCharacters(result.completion));
  if (!reported) {
    result.completion.usage = toWireUsage(usage);
    text = undefined;
  }
  text ??= JSON.stringify(result.completion);
  response.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  response.end(text);
  record.status = 200;
  record.outcome = 'success';
  if (record.principal?.logBodies) record.responseBody = text;
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
  deployment: Deployment,
  call: ProviderCall,
): Promise<void> {
  const includeUsage = call.request.stream_options?.include_usage === true;
  const keepBody = record.principal?.logBodies === true;
  const loggedEvents: string[] = [];
  let started = false;

  const start = () => {
    if (started) return;
    started = true;
    record.status = 200;
    response.writeHead(200, sseHeaders);
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
    const items = await deployment.provider.stream(call);
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
    const usage = settleUsage(record, deployment, call.request, reported, completionCharacters);
    if (includeUsage && !reported && lastChunk) {
      await write(sseData(JSON.stringify({ ...lastChunk, choices: [], usage: toWireUsage(usage) })));
    }
    await write(sseDone);
    response.end();
    record.outcome = 'success';
  } catch (error) {
    settleUsage(record, deployment, call.request, reported, completionCharacters);
    // Before the first byte, errors are ordinary HTTP errors; a client that left cannot be told anything.
    if (!started || response.destroyed) throw error;
    const apiError = call.signal.aborted ? abortedError(call.signal.reason) : toApiError(error);
    // Mid-stream failure: an in-band error, then [DONE]; never a clean-looking finish.
    await write(renderStreamError(apiError));
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
  return new ApiError({
    status: 503,
    type: 'server_error',
    code: 'service_unavailable',
    message: 'The request was interrupted.',
  });
}
