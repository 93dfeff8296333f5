import { timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type ApiError, apiError, routeNotFound, toApiError } from '../errors/api-error.js';
import { renderOpenAiError } from '../errors/render-openai.js';
import type { Metrics } from '../observability/metrics.js';

/**
 * /metrics names providers, deployments and upstream models, which only admins see elsewhere. The operator can keep
 * it off the public port (metrics.port: a listener of its own, e.g. on an internal address) and/or require a bearer
 * token (metrics.bearer_token), which Prometheus sends with `authorization: { credentials: … }`.
 */

export function isAuthorizedScrape(authorization: string | undefined, token: string | undefined): boolean {
  if (token === undefined) return true;
  const presented = Buffer.from(authorization ?? '');
  const expected = Buffer.from(`Bearer ${token}`);
  return presented.length === expected.length && timingSafeEqual(presented, expected);
}

export const scrapeRefused = () =>
  apiError('invalid_metrics_token', '/metrics needs "Authorization: Bearer <metrics.bearer_token>".');

/** A listener serving only /metrics (and refusing everything else with 404). */
export async function startMetricsServer(options: {
  host: string;
  port: number;
  metrics: Metrics;
  bearerToken: string | undefined;
}): Promise<{ url: string; close(): Promise<void> }> {
  const answer = (response: ServerResponse, error: ApiError) => {
    const rendered = renderOpenAiError(error);
    response.writeHead(rendered.status, { ...rendered.headers, 'x-content-type-options': 'nosniff' });
    response.end(rendered.body);
  };
  const server: Server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const path = (request.url ?? '/').split('?')[0];
    if (path !== '/metrics' || (request.method !== 'GET' && request.method !== 'HEAD')) {
      answer(response, routeNotFound(request.method ?? 'GET', path ?? '/'));
      return;
    }
    if (!isAuthorizedScrape(request.headers.authorization, options.bearerToken)) {
      answer(response, scrapeRefused());
      return;
    }
    options.metrics.render().then(
      (text) => {
        response.writeHead(200, {
          'content-type': options.metrics.registry.contentType,
          'x-content-type-options': 'nosniff',
        });
        response.end(text);
      },
      (error: unknown) => answer(response, toApiError(error)),
    );
  });
  server.requestTimeout = 10_000;
  server.headersTimeout = 10_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${host}:${address.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
