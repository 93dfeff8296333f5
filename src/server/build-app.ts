import { createServer, type IncomingMessage, type Server, type ServerResponse, STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import Fastify, { type FastifyInstance, type FastifyReply } from 'fastify';
import type { Redis } from 'ioredis';
import { sql } from 'kysely';
import { registerManagementApi } from '../api/manage/index.js';
import type { ManagementServices } from '../api/manage/services.js';
import type { DataPlane } from '../api/v1/data-plane.js';
import type { DatabaseHandle } from '../db/connect.js';
import { ApiError, apiError, routeNotFound } from '../errors/api-error.js';
import type { ErrorCode } from '../errors/error-codes.js';
import { renderOpenAiError } from '../errors/render-openai.js';
import type { Logger } from '../observability/logger.js';
import type { Metrics } from '../observability/metrics.js';
import { answerBodyTimeout, bodyTimeoutError, enforceBodyDeadline } from './body-deadline.js';
import { type ConsoleAssets, registerConsole } from './console-assets.js';
import { isAuthorizedScrape, scrapeRefused } from './metrics-endpoint.js';
import { limitPipelinedRequests } from './pipelined-requests.js';
import { RequestIds } from './request-id.js';
import { securityHeaders } from './security-headers.js';

/**
 * The HTTP server: /v1/* goes straight to the data plane on node:http (the hot path); everything else (health,
 * readiness, metrics, later the management API and console) is served by Fastify on the same server and port.
 */

export interface AppDependencies {
  dataPlane: DataPlane;
  database: DatabaseHandle;
  metrics: Metrics;
  logger: Logger;
  /** Checked by /readyz when configured. */
  redis?: Redis | undefined;
  /** The management API (/api) and the web console (/console); absent when console.enabled is false. */
  management?: { services: ManagementServices; consoleAssets: ConsoleAssets; version: string };
  http: {
    /** Deadlines for a request to arrive whole (headers and body), per route group. */
    apiBodyTimeoutMs: number;
    v1BodyTimeoutMs: number;
    maxConnections: number;
    /** Requests of one connection served at once (HTTP/1.1 pipelining). */
    maxPipelinedRequests: number;
    /** Believe X-Forwarded-Proto (console.trust_proxy), for HSTS. */
    trustProxy: boolean;
  };
  /** Whether /metrics is served on this port (not when it has a port of its own), and the token it requires. */
  metricsEndpoint: { onMainPort: boolean; bearerToken: string | undefined };
}

function isDataPlane(url: string | undefined): boolean {
  return url !== undefined && (url.startsWith('/v1/') || url === '/v1' || url.startsWith('/v1?'));
}

/**
 * Scrapes and health checks: not traffic. Counted, they would keep the event-loop lag sampled (event-loop-lag.ts)
 * under every Prometheus and load balancer.
 */
function isProbe(url: string | undefined): boolean {
  return url === '/metrics' || url === '/healthz' || url === '/readyz';
}

/**
 * Requests so malformed that Node's HTTP parser rejects them (bad header bytes, oversized headers, a body that
 * never finishes) still get the OpenAI error body, with a JSON content type and a request id, instead of Node's
 * bare "400 Bad Request".
 */
function answerMalformedRequest(error: NodeJS.ErrnoException, socket: Duplex, requestIds: RequestIds): void {
  if (error.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const status = error.code === 'HPE_HEADER_OVERFLOW' ? 431 : error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
  const message =
    status === 431
      ? 'The request headers are too large.'
      : status === 408
        ? 'The request was not received in time (its headers or body arrived too slowly).'
        : `The HTTP request is malformed (${error.code ?? 'parse error'}).`;
  const code = status === 408 ? 'request_timeout' : 'malformed_request';
  const body = JSON.stringify({ error: { message, type: 'invalid_request_error', param: null, code } });
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nx-request-id: ${requestIds.next()}\r\nconnection: close\r\n\r\n${body}`,
  );
}

/**
 * Why a request's body could not be read, from the HTTP parser's error. A connection that ends in the middle of the
 * body is the client leaving (whether it closed or only half-closed its side cannot be told apart): its endpoint still
 * answers that the body was incomplete, and the request is logged as cancelled.
 */
function bodyFailure(error: NodeJS.ErrnoException): ApiError | 'client_closed' {
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') return bodyTimeoutError();
  if (error.code === 'HPE_INVALID_EOF_STATE') return 'client_closed';
  return apiError('malformed_request', `The HTTP request is malformed (${error.code ?? 'parse error'}).`);
}

/** The codes of the client errors Fastify raises itself (a bad JSON body, a body too large, …). */
const frameworkErrorCodes: Readonly<Record<number, ErrorCode>> = {
  404: 'unknown_url',
  405: 'method_not_allowed',
  408: 'request_timeout',
  413: 'request_too_large',
  415: 'unsupported_media_type',
};

/** A client error raised by Fastify, by the table's code for its status; undefined for anything else. */
function frameworkRefusal(error: unknown): ApiError | undefined {
  const status = (error as { statusCode?: unknown }).statusCode;
  if (typeof status !== 'number' || status < 400 || status >= 500) return undefined;
  // Fastify's JSON parser answers every route but those that keep the raw bytes, which say invalid_json themselves.
  if ((error as { code?: unknown }).code === 'FST_ERR_CTP_INVALID_JSON_BODY') {
    return apiError('invalid_json', 'The body is not valid JSON.');
  }
  return apiError(frameworkErrorCodes[status] ?? 'invalid_request', (error as Error).message);
}

export function buildApp(dependencies: AppDependencies): FastifyInstance<Server> {
  const { dataPlane, database, metrics, http } = dependencies;
  const requestIds = new RequestIds();
  // Node enforces the longest deadline on every request itself (a sweep over the connections, no timer per request);
  // the route group with the shorter one gets a timer of its own (body-deadline.ts).
  const requestTimeout = Math.max(http.apiBodyTimeoutMs, http.v1BodyTimeoutMs);
  const app = Fastify<Server>({
    serverFactory: (fastifyHandler) => {
      const server = createServer(
        {
          requestTimeout,
          headersTimeout: Math.min(60_000, requestTimeout),
          connectionsCheckingInterval: Math.min(5000, Math.max(50, Math.floor(requestTimeout / 8))),
        },
        limitPipelinedRequests(http.maxPipelinedRequests, (request: IncomingMessage, response: ServerResponse) => {
          if (!isProbe(request.url)) metrics.eventLoopLag.noteActivity();
          if (isDataPlane(request.url)) {
            if (http.v1BodyTimeoutMs < requestTimeout) {
              // The endpoint answers in its own shape, under the request's own id, and logs what it answered.
              enforceBodyDeadline(request, http.v1BodyTimeoutMs, () => {
                if (!dataPlane.failBody(request.socket, bodyTimeoutError())) request.socket.destroy();
              });
            }
            dataPlane.handle(request, response);
          } else {
            if (http.apiBodyTimeoutMs < requestTimeout) {
              enforceBodyDeadline(request, http.apiBodyTimeoutMs, () =>
                answerBodyTimeout(request, response, requestIds.next()),
              );
            }
            fastifyHandler(request, response);
          }
        }),
      );
      // Each connection holds memory and a file descriptor; past the cap, new ones are closed at once.
      server.maxConnections = http.maxConnections;
      server.on('drop', () => metrics.connectionsDropped.inc());
      // Longer than the idle timeout of common load balancers (60 s), so they never reuse a connection we just closed.
      server.keepAliveTimeout = 65_000;
      return server;
    },
    // The one handler of the server's clientError (Fastify registers it; a second listener would answer twice).
    clientErrorHandler: (error: NodeJS.ErrnoException, socket: Duplex) => {
      // A data-plane request whose body broke (cut short, malformed chunks, too slow) is answered by its endpoint.
      if (error.code !== 'ECONNRESET' && socket.writable && dataPlane.failBody(socket, bodyFailure(error))) return;
      answerMalformedRequest(error, socket, requestIds);
    },
    genReqId: () => requestIds.next(),
    // An id longer than any real one reaches its route and is not found there; only past this is the path refused.
    routerOptions: { maxParamLength: 1024 },
    // A path Fastify refuses before routing (bad percent-encoding, a segment over the length above).
    frameworkErrors: (error, _request, reply) => {
      const rendered = renderOpenAiError(frameworkRefusal(error) ?? apiError('malformed_request', error.message));
      void (reply as FastifyReply).code(rendered.status).headers(rendered.headers).send(rendered.body);
    },
    logger: false,
    // Errors raised by Fastify itself (bad JSON on /api, …) reach the error handler below.
    return503OnClosing: true,
  });

  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
    reply.headers(securityHeaders(request.raw, http.trustProxy));
  });

  app.setErrorHandler((error, _request, reply) => {
    const refusal = error instanceof ApiError ? error : frameworkRefusal(error);
    if (!refusal) dependencies.logger.error({ err: error }, 'unexpected error in a management route');
    const rendered = renderOpenAiError(refusal ?? error);
    void reply.code(rendered.status).headers(rendered.headers).send(rendered.body);
  });

  app.setNotFoundHandler((request, reply) => {
    const rendered = renderOpenAiError(routeNotFound(request.method, request.url.split('?')[0] ?? '/'));
    void reply.code(rendered.status).headers(rendered.headers).send(rendered.body);
  });

  app.get('/healthz', async () => ({ status: 'ok' }));

  app.get('/readyz', async (_request, reply) => {
    const checks: Record<string, 'ok' | 'unreachable'> = {};
    try {
      await sql`select 1`.execute(database.db);
      checks.database = 'ok';
    } catch {
      checks.database = 'unreachable';
    }
    if (dependencies.redis) {
      try {
        await dependencies.redis.ping();
        checks.redis = 'ok';
      } catch {
        checks.redis = 'unreachable';
      }
    }
    const failing = Object.entries(checks).filter(([, state]) => state !== 'ok');
    if (failing.length === 0) return { status: 'ready', ...checks };
    const rendered = renderOpenAiError(
      apiError('not_ready', `Not ready: ${failing.map(([name]) => name).join(' and ')} unreachable.`),
    );
    return reply.code(503).headers(rendered.headers).send(rendered.body);
  });

  if (dependencies.metricsEndpoint.onMainPort) {
    app.get('/metrics', async (request, reply) => {
      if (!isAuthorizedScrape(request.headers.authorization, dependencies.metricsEndpoint.bearerToken)) {
        throw scrapeRefused();
      }
      reply.header('content-type', metrics.registry.contentType);
      return metrics.exposition();
    });
  }

  if (dependencies.management) {
    registerManagementApi(app, dependencies.management.services, dependencies.management.version);
    registerConsole(app, dependencies.management.consoleAssets);
  }

  return app;
}
