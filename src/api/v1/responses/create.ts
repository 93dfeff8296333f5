import type { ParsedBody } from '../../../server/read-body.js';
import type { Exchange, Outcome } from '../pipeline/endpoint.js';
import { completeResponse } from './complete.js';
import { newResponseId } from './ids.js';
import { nativeRequestBody } from './native.js';
import { isNative, type ResponsesPlan, translateFor } from './operation.js';
import { isThinkingEnvelope } from './reasoning-envelope.js';
import { createResponseObject } from './response-object.js';
import type { ResponseStore } from './response-store.js';
import { checkStorable, loadState, storingFor } from './state.js';
import { streamResponse } from './stream.js';
import type { InputItem, ResponsesRequest } from './types.js';

/**
 * POST /v1/responses: the stored conversation loaded when the request continues one, the request translated for the
 * requested model (so its 400s come before anything is sent), then answered as JSON or as an SSE stream by whichever
 * deployment dispatch finds, and the finished response queued for storage unless `store: false`.
 */
export async function createResponse(
  store: ResponseStore,
  request: ResponsesRequest,
  exchange: Exchange,
  body: ParsedBody | undefined,
): Promise<Outcome> {
  const maxStoredBytes = exchange.services.config.responses.maxStoredBytes;
  checkStorable(request, body, maxStoredBytes);
  const state = await loadState(store, request, exchange.principal.accountId, {
    bodyBytes: body?.bytes.length ?? 0,
    maxStoredBytes,
  });
  const route = exchange.route;
  if (!route) throw new Error('a /v1/responses request reached its handler without a route');
  const translated = state.request;
  const now = Date.now();
  const base = createResponseObject(translated, {
    id: newResponseId(now),
    createdAt: Math.floor(now / 1000),
    model: translated.model,
  });
  // The client's bytes go to a native upstream when they are exactly what it should receive.
  const forwardable =
    body?.forwardable && state.history.length === 0 && translated === request ? body.bytes : undefined;
  const plan: ResponsesPlan = {
    request: translated,
    history: state.history,
    // A model served only natively is never translated (its items may be ones chat cannot carry).
    first: route.deployments.every(isNative)
      ? undefined
      : { model: route.model.name, translation: translateFor(translated, state.history, route.model) },
    nativeBody: (upstreamModel) => nativeBody(translated, state.history, upstreamModel, forwardable),
    nativeDropped: [translated.input, state.history].some(holdsOwnThinking)
      ? ['input.reasoning.encrypted_content']
      : [],
  };
  const storing = storingFor(exchange, state, store);
  return translated.stream === true
    ? streamResponse(plan, base, storing, exchange)
    : completeResponse(plan, base, storing, exchange);
}

/** A reasoning item carrying Claude's signed thinking in the gateway's envelope (reasoning-envelope.ts). */
function isOwnThinking(item: InputItem): boolean {
  return item.type === 'reasoning' && isThinkingEnvelope(item.encrypted_content);
}

function holdsOwnThinking(items: ResponsesRequest['input'] | readonly InputItem[]): boolean {
  return Array.isArray(items) && items.some(isOwnThinking);
}

/**
 * A native upstream's body: the request as it came, or with the history the gateway resolved placed before the input
 * (the upstream is not asked for a response it never saw). Reasoning items holding the gateway's envelope of Claude's
 * thinking are left out: an OpenAI upstream cannot read them and would refuse the request; its own pass untouched.
 */
function nativeBody(
  request: ResponsesRequest,
  history: readonly InputItem[],
  upstreamModel: string,
  bytes: Buffer | undefined,
): string | Buffer {
  const own = holdsOwnThinking(request.input) || holdsOwnThinking(history);
  if (history.length === 0 && !own) return nativeRequestBody(request, upstreamModel, bytes);
  const input: InputItem[] =
    typeof request.input === 'string'
      ? [{ role: 'user', content: request.input }]
      : Array.isArray(request.input)
        ? request.input
        : [];
  const { previous_response_id: _previous, ...rest } = request;
  const items = [...history, ...input];
  return JSON.stringify({
    ...rest,
    model: upstreamModel,
    input: own ? items.filter((item) => !isOwnThinking(item)) : items,
  });
}
