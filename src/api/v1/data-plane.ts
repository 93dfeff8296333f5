import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError, methodNotAllowed, routeNotFound, toApiError } from '../../errors/api-error.js';
import { renderOpenAiError } from '../../errors/render-openai.js';
import { KeyRefusedError, type Principal } from '../../keys/authenticate.js';
import type { RequestRecord } from '../../request-log/record.js';
import { toLogRow } from '../../request-log/record.js';
import { Cancellation } from '../../server/cancellation.js';
import { InFlightRequests } from '../../server/in-flight.js';
import { RequestIds } from '../../server/request-id.js';
import { handleChatCompletions } from './chat-completions.js';
import { listModels, retrieveModel } from './models.js';
import type { DataPlaneServices } from './services.js';

/**
 * The /v1 data plane, served from node:http directly (measured ~20% more throughput than through the framework).
 * For every request: an x-request-id, authentication, the route, errors rendered in exactly one place, and a
 * request-log row enqueued at the end whenever the request identified an account.
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
}

const corsAllowedHeaders =
  'authorization, content-type, accept, openai-organization, openai-project, openai-beta, x-stainless-arch, x-stainless-lang, x-stainless-os, x-stainless-package-version, x-stainless-retry-count, x-stainless-runtime, x-stainless-runtime-version, x-stainless-timeout, x-stainless-read-timeout, x-stainless-async, x-stainless-helper-method, x-stainless-poll-helper, x-stainless-custom-poll-interval';

export function createDataPlane(services: DataPlaneServices): DataPlane {
  const active = new InFlightRequests();
  const requestIds = new RequestIds();
  let started = 0;
  let idleWaiters: Array<() => void> = [];
  const modelsCreated = Math.floor(Date.now() / 1000);
  const allowedOrigins = new Set(services.config.server.corsAllowedOrigins);
  const allowAnyOrigin = allowedOrigins.has('*');
  const { metrics } = services;

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

  /** The route's work; a promise only for what has to wait (chat completions, a key not yet cached). */
  function route(
    request: IncomingMessage,
    response: ServerResponse,
    record: RequestRecord,
    cancellation: Cancellation,
  ): Promise<void> | undefined {
    const url = request.url ?? '/';
    const queryStart = url.indexOf('?');
    const path = queryStart === -1 ? url : url.slice(0, queryStart);
    const method = request.method ?? 'GET';

    if (method === 'OPTIONS' && allowedOrigins.size > 0) {
      response.writeHead(204, {
        'x-request-id': record.requestId,
        'access-control-allow-methods': 'GET, POST, OPTIONS',
        'access-control-allow-headers': corsAllowedHeaders,
        'access-control-max-age': '600',
      });
      response.end();
      record.route = 'preflight';
      record.status = 204;
      return undefined;
    }

    if (path === '/v1/chat/completions') {
      record.route = 'chat_completions';
      if (method !== 'POST') throw methodNotAllowed(method, path, 'POST');
      // A key found in the cache is answered synchronously; a refused key that exists still names its account (the
      // catch in handle() takes it from the KeyRefusedError).
      const principal = authenticate(request);
      if (principal instanceof Promise) {
        return principal.then((loaded) => {
          record.principal = loaded;
          return handleChatCompletions(request, response, record, services, cancellation);
        });
      }
      record.principal = principal;
      return handleChatCompletions(request, response, record, services, cancellation);
    }
    if (path === '/v1/models' || path.startsWith('/v1/models/')) {
      record.route = path === '/v1/models' ? 'models' : 'model';
      if (method !== 'GET') throw methodNotAllowed(method, path, 'GET');
      return serveModels(request, response, record, path);
    }
    throw routeNotFound(method, path);
  }

  function authenticate(request: IncomingMessage): Principal | Promise<Principal> {
    return services.authenticator.authenticate(
      request.headers.authorization,
      request.headers['x-api-key'] !== undefined,
    );
  }

  async function serveModels(
    request: IncomingMessage,
    response: ServerResponse,
    record: RequestRecord,
    path: string,
  ): Promise<void> {
    const principal = await authenticate(request);
    record.principal = principal;
    if (path === '/v1/models') {
      listModels(response, record.requestId, principal, services.catalog, modelsCreated);
    } else {
      let id: string;
      try {
        id = decodeURIComponent(path.slice('/v1/models/'.length));
      } catch {
        id = path.slice('/v1/models/'.length);
      }
      record.model = id.slice(0, 256);
      retrieveModel(response, record.requestId, principal, services.catalog, modelsCreated, id);
    }
    record.status = 200;
  }

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const startedAt = Date.now();
    const record: RequestRecord = {
      requestId: requestIds.next(startedAt),
      startedAt,
      startedAtPrecise: performance.now(),
      route: 'unknown',
      stream: false,
      status: 0,
      outcome: 'success',
      userAgent: request.headers['user-agent'],
    };
    // x-request-id goes out with each writeHead's own headers (never setHeader here): a header set before writeHead
    // sends Node down its slow path, every header then set and validated one by one (a response head measured
    // 1,160 -> 654 ns without it).
    applyCors(request, response);
    const cancellation = new Cancellation();
    active.add(cancellation);
    started++;
    response.on('close', () => {
      // The client went away before we finished: stop the upstream work at once.
      if (!response.writableFinished) cancellation.abort('client_closed');
    });
    try {
      const wait = services.logWriter.waitForCapacity();
      if (wait) await wait;
      const routed = route(request, response, record, cancellation);
      if (routed) await routed;
    } catch (error) {
      // A key that exists but was refused (revoked, expired, account disabled): the refusal is logged to its account.
      if (error instanceof KeyRefusedError) record.principal ??= error.principal;
      // A request cut short by the server (shutdown deadline) reports why, not a generic cancellation.
      const reason = cancellation.aborted ? cancellation.reason : undefined;
      const apiError = reason instanceof ApiError ? reason : toApiError(error);
      if (!(error instanceof ApiError) && !(reason instanceof ApiError)) {
        services.logger.error({ err: error, requestId: record.requestId }, 'unexpected error while serving a request');
      } else if (apiError.status >= 500) {
        metrics.upstreamErrors.inc({ provider: record.provider ?? 'none', code: apiError.code ?? 'none' });
      }
      record.error = apiError;
      record.status = apiError.status;
      record.outcome = 'error';
      if (cancellation.aborted && cancellation.reason === 'client_closed') {
        record.outcome = 'cancelled';
        record.status = 499;
      }
      if (!response.headersSent && !response.destroyed) {
        const rendered = renderOpenAiError(apiError, record.requestId);
        // A body we refused to read would otherwise be read to the end before the next request on this connection.
        if (apiError.status === 413) rendered.headers.connection = 'close';
        response.writeHead(rendered.status, rendered.headers);
        response.end(rendered.body);
      } else if (!response.writableEnded) {
        response.end();
      }
    } finally {
      active.delete(cancellation);
      const finishedAt = performance.now();
      const model = record.model && services.catalog.byName.has(record.model) ? record.model : 'other';
      metrics.recordRequest(
        record.route,
        record.status,
        model,
        record.stream,
        (finishedAt - record.startedAtPrecise) / 1000,
      );
      if (record.firstTokenAt !== undefined) {
        metrics.timeToFirstToken.observe((record.firstTokenAt - record.startedAtPrecise) / 1000, model);
      }
      const row = toLogRow(record, finishedAt);
      if (row) services.logWriter.enqueue(row);
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
  };
}
