import type { IncomingMessage, ServerResponse } from 'node:http';
import { type ApiError, methodNotAllowed, routeNotFound } from '../../errors/api-error.js';
import { renderOpenAiError } from '../../errors/render-openai.js';
import { Cancellation } from '../../server/cancellation.js';
import { InFlightRequests } from '../../server/in-flight.js';
import { QueuedResponses } from '../../server/queued-responses.js';
import { RequestIds } from '../../server/request-id.js';
import { createRouteTable } from './endpoints.js';
import { allowedMethods, endpointForMethod } from './pipeline/route-table.js';
import { RequestPipeline } from './pipeline/serve-request.js';
import type { DataPlaneServices } from './services.js';

/**
 * The /v1 data plane, served from node:http directly (no framework on the hot path; see docs/architecture.md). Gives
 * every request an x-request-id and a cancellation, answers CORS preflights, finds the endpoint for the path and
 * method, and hands the request to the pipeline (pipeline/serve-request.ts); tracks what is in flight for shutdown.
 */

export interface DataPlane {
  handle(request: IncomingMessage, response: ServerResponse): void;
  /** Requests being served right now. */
  readonly inFlight: number;
  /** Requests started since the process began (only grows). */
  readonly started: number;
  /** Resolves when no request is in flight. */
  idle(): Promise<void>;
  /** Cuts every in-flight request short (streams get an in-band error); used when the shutdown deadline passes. */
  abortAll(reason: ApiError): void;
  /**
   * Ends the request still being read on a connection because its body broke (malformed, too slow, or cut short by
   * the client leaving: `client_closed`): its endpoint answers in its own shape and logs it. False when no request on
   * the connection can still answer.
   */
  failBody(socket: object, reason: ApiError | 'client_closed'): boolean;
}

const corsAllowedHeaders =
  'authorization, content-type, accept, openai-organization, openai-project, openai-beta, x-stainless-arch, x-stainless-lang, x-stainless-os, x-stainless-package-version, x-stainless-retry-count, x-stainless-runtime, x-stainless-runtime-version, x-stainless-timeout, x-stainless-read-timeout, x-stainless-async, x-stainless-helper-method, x-stainless-poll-helper, x-stainless-custom-poll-interval';

export function createDataPlane(services: DataPlaneServices): DataPlane {
  const active = new InFlightRequests();
  const queuedResponses = new QueuedResponses();
  const requestIds = new RequestIds();
  const routes = createRouteTable(services.catalog, Math.floor(Date.now() / 1000));
  const pipeline = new RequestPipeline(services);
  let started = 0;
  let idleWaiters: Array<() => void> = [];
  const allowedOrigins = new Set(services.config.server.corsAllowedOrigins);
  const allowAnyOrigin = allowedOrigins.has('*');

  function applyCors(request: IncomingMessage, response: ServerResponse): void {
    if (allowedOrigins.size === 0) return;
    const origin = request.headers.origin;
    if (origin === undefined || !(allowAnyOrigin || allowedOrigins.has(origin))) return;
    response.setHeader('access-control-allow-origin', allowAnyOrigin ? '*' : origin);
    response.setHeader(
      'access-control-expose-headers',
      'x-request-id, retry-after, retry-after-ms, x-should-retry, x-switchboard-dropped-parameters',
    );
    if (!allowAnyOrigin) response.setHeader('vary', 'origin');
  }

  /** Answers a request no endpoint takes (preflight, unknown path, wrong method): counted, never logged. */
  function answerDirectly(
    response: ServerResponse,
    label: string,
    startedAtPrecise: number,
    status: number,
    headers: Record<string, string>,
    body?: string,
  ): void {
    response.writeHead(status, headers);
    response.end(body);
    services.metrics.recordRequest(label, status, 'other', false, (performance.now() - startedAtPrecise) / 1000);
  }

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const startedAt = Date.now();
    const startedAtPrecise = performance.now();
    // x-request-id goes out with each writeHead's own headers, never through setHeader here: that would build the
    // response's header map for every request.
    const requestId = requestIds.next(startedAt);
    applyCors(request, response);
    const cancellation = new Cancellation();
    active.add(cancellation);
    started++;
    cancellation.request = request;
    response.on('close', () => {
      // The client went away before we finished: stop the upstream work at once.
      if (!response.writableFinished) cancellation.abort('client_closed');
    });
    // A pipelined request whose response waits for the connection hears of the client's leaving only from it.
    if (response.socket === null) queuedResponses.watch(request, response, cancellation);
    try {
      const wait = services.logWriter.waitForCapacity();
      if (wait) await wait;
      const url = request.url ?? '/';
      const queryStart = url.indexOf('?');
      const path = queryStart === -1 ? url : url.slice(0, queryStart);
      const method = request.method ?? 'GET';

      if (method === 'OPTIONS' && allowedOrigins.size > 0) {
        answerDirectly(response, 'preflight', startedAtPrecise, 204, {
          'x-request-id': requestId,
          'access-control-allow-methods': 'GET, POST, DELETE, OPTIONS',
          'access-control-allow-headers': corsAllowedHeaders,
          'access-control-max-age': '600',
        });
        return;
      }
      const match = routes.match(path);
      const endpoint = match && endpointForMethod(match.endpoints, method);
      if (!match || !endpoint) {
        const firstEndpoint = match && Object.values(match.endpoints)[0];
        const error = match
          ? methodNotAllowed(method, path, allowedMethods(match.endpoints))
          : routeNotFound(method, path);
        const rendered = (firstEndpoint?.renderError ?? renderOpenAiError)(error, requestId);
        const label = firstEndpoint?.name ?? 'unknown';
        answerDirectly(response, label, startedAtPrecise, rendered.status, rendered.headers, rendered.body);
        return;
      }
      await pipeline.serve(
        endpoint,
        {
          requestId,
          startedAt,
          startedAtPrecise,
          params: match.params,
          query: queryStart === -1 ? '' : url.slice(queryStart + 1),
          userAgent: request.headers['user-agent'],
        },
        request,
        response,
        cancellation,
      );
    } finally {
      active.delete(cancellation);
      if (active.size === 0 && idleWaiters.length > 0) {
        for (const resolve of idleWaiters) resolve();
        idleWaiters = [];
      }
    }
  }

  return {
    handle(request, response) {
      void handle(request, response);
    },
    get inFlight() {
      return active.size;
    },
    get started() {
      return started;
    },
    idle() {
      if (active.size === 0) return Promise.resolve();
      return new Promise((resolve) => idleWaiters.push(resolve));
    },
    abortAll(reason) {
      active.abortAll(reason);
    },
    failBody(socket, reason) {
      const reading = active.readingOn(socket);
      if (!reading || reading.aborted) return false;
      reading.abort(reason);
      return true;
    },
  };
}
