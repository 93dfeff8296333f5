import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError, modelNotFound, toApiError } from '../../../errors/api-error.js';
import type { ErrorCode } from '../../../errors/error-codes.js';
import { KeyRefusedError, type Principal } from '../../../keys/authenticate.js';
import { type Admission, admittedWithoutLimits } from '../../../limits/limiter.js';
import { type FinishedRequest, toLogRow } from '../../../request-log/record.js';
import { capabilityRefusal } from '../../../routing/model-capability.js';
import type { Route } from '../../../routing/router.js';
import { type DispatchTrace, lastDeploymentAttempt, newTrace } from '../../../routing/trace.js';
import type { Cancellation } from '../../../server/cancellation.js';
import { type ParsedBody, readJsonBody } from '../../../server/read-body.js';
import { costOf } from '../../../usage/usage.js';
import type { DataPlaneServices } from '../services.js';
import { admit } from './admission.js';
import { endAfter } from './end-after.js';
import type { Endpoint, EndpointRequest, Exchange, Outcome } from './endpoint.js';

/**
 * The one request pipeline every /v1 endpoint goes through: authenticate, read the body under its size limit, let the
 * endpoint check it, authorize the model (the same 404 for unknown and forbidden), reserve against limits and budgets,
 * hand over to the endpoint's handler, then settle usage and cost, render an error in the endpoint's shape, count the
 * metrics and enqueue the log row, built once from what the handler returned and what the pipeline observed.
 */

/** Errors about the body itself, after which the connection is closed. */
const endsConnection: ReadonlySet<ErrorCode> = new Set([
  'request_too_large',
  'request_timeout',
  'incomplete_body',
  'malformed_request',
]);

/** One request on its way through the pipeline: what it has learned so far (only this module writes it). */
interface Progress {
  principal: Principal | undefined;
  model: string | undefined;
  stream: boolean;
  route: Route | undefined;
  trace: DispatchTrace | undefined;
  admission: Admission;
  /** Lets the response end, when its end waits for the settlement (shared counters, see Admission.shared). */
  settledToEnd: (() => void) | undefined;
  requestBody: string | undefined;
}

export interface Arrival {
  requestId: string;
  startedAt: number;
  startedAtPrecise: number;
  params: Readonly<Record<string, string>>;
  /** The query string, without its `?`. */
  query: string;
  userAgent: string | undefined;
}

export class RequestPipeline {
  constructor(private readonly services: DataPlaneServices) {}

  /** Serves one request to its end (never throws): answered, logged and counted. */
  async serve(
    endpoint: Endpoint,
    arrival: Arrival,
    request: IncomingMessage,
    response: ServerResponse,
    cancellation: Cancellation,
  ): Promise<void> {
    const { services } = this;
    const progress: Progress = {
      principal: undefined,
      model: undefined,
      stream: false,
      route: undefined,
      trace: undefined,
      admission: admittedWithoutLimits,
      settledToEnd: undefined,
      requestBody: undefined,
    };
    let outcome: Outcome | undefined;
    let failure: { error: ApiError; unexpected: boolean } | undefined;
    try {
      const principal = await services.authenticator.authenticate(
        request.headers.authorization,
        request.headers['x-api-key'] !== undefined,
      );
      progress.principal = principal;
      outcome = await this.run(endpoint, arrival, request, response, cancellation, principal, progress);
    } catch (error) {
      // A key that exists but was refused (revoked, expired, account disabled): the refusal is logged to its account.
      if (error instanceof KeyRefusedError) progress.principal ??= error.principal;
      failure = this.failure(error, cancellation, arrival.requestId);
      if (!response.headersSent && !response.destroyed) {
        const rendered = endpoint.renderError(failure.error, arrival.requestId);
        // A body we refused to read would otherwise be read to the end before the next request on this connection;
        // one that broke leaves nothing on it to read the next request from.
        if (endsConnection.has(failure.error.errorCode)) rendered.headers.connection = 'close';
        // Whole, with its length: a client that broke its upload may read no further than the body it expects.
        rendered.headers['content-length'] = String(Buffer.byteLength(rendered.body));
        response.writeHead(rendered.status, rendered.headers);
        response.end(rendered.body);
      } else if (!response.writableEnded) {
        response.end();
      }
    }
    this.finish(endpoint, arrival, response, cancellation, progress, outcome, failure);
  }

  /**
   * Everything from the body to the handler. The handler's promise is returned, not awaited: the body and the parsed
   * request are not kept alive by this function while a long answer streams.
   */
  private async run(
    endpoint: Endpoint,
    arrival: Arrival,
    request: IncomingMessage,
    response: ServerResponse,
    cancellation: Cancellation,
    principal: Principal,
    progress: Progress,
  ): Promise<Outcome> {
    const { services } = this;
    let body: ParsedBody | undefined;
    if (endpoint.readsBody) {
      body = await readJsonBody(request, services.config.limits.maxBodyBytes, cancellation);
      if (principal.logBodies) progress.requestBody = body.text;
    }
    // Named before validation, so a refused request is counted and logged under the model it asked for.
    const asked = (body?.value as { model?: unknown } | null | undefined)?.model;
    if (typeof asked === 'string') progress.model = asked.slice(0, 256);
    const parsed: EndpointRequest = endpoint.parse({ body: body?.value, params: arrival.params, query: arrival.query });
    const model = parsed.model;
    progress.stream = parsed.stream === true;
    if (model !== undefined) {
      progress.model = model.slice(0, 256);
      // The same policy that produced /v1/models; unknown and forbidden models get the same 404.
      if (!principal.modelSet.has(model)) throw modelNotFound(model);
      if (endpoint.dispatches) {
        const route = services.router.resolve(model);
        progress.route = route;
        const refusal = capabilityRefusal(route.model, endpoint.modelCapability ?? 'chat');
        if (refusal) throw refusal;
      }
    }
    if (endpoint.reserve) {
      const reservation = endpoint.reserve(parsed, services.config.limits.completionTokenReserve);
      const admission = admit(
        services.limiter,
        services.metrics,
        principal,
        reservation,
        progress.route?.model.pricing,
      );
      progress.admission = admission instanceof Promise ? await admission : admission;
      if (progress.admission.shared) {
        const settled = new Promise<void>((resolve) => (progress.settledToEnd = resolve));
        endAfter(response, () => settled);
      }
      const headers = progress.admission.headers;
      for (const name in headers) response.setHeader(name, headers[name] as string);
    }
    const trace = newTrace();
    // Only requests that go through dispatch have attempts to log.
    if (endpoint.dispatches) progress.trace = trace;
    const exchange: Exchange = {
      requestId: arrival.requestId,
      response,
      principal,
      signal: cancellation,
      trace,
      route: progress.route,
      params: arrival.params,
      headers: request.headers,
      url: request.url ?? '',
      services,
      logBodies: principal.logBodies,
    };
    return endpoint.handle(parsed, exchange, body);
  }

  /** The error to answer (or log) for whatever ended the request early; unexpected ones are logged in full. */
  private failure(
    thrown: unknown,
    cancellation: Cancellation,
    requestId: string,
  ): { error: ApiError; unexpected: boolean } {
    // A request cut short by the server (shutdown deadline) reports why, not a generic cancellation.
    const reason = cancellation.aborted ? cancellation.reason : undefined;
    if (reason instanceof ApiError) return { error: reason, unexpected: false };
    if (thrown instanceof ApiError) return { error: thrown, unexpected: false };
    this.services.logger.error({ err: thrown, requestId }, 'unexpected error while serving a request');
    return { error: toApiError(thrown), unexpected: true };
  }

  /** Settles limits, counts the metrics and enqueues the log row: once per request, whatever happened. */
  private finish(
    endpoint: Endpoint,
    arrival: Arrival,
    response: ServerResponse,
    cancellation: Cancellation,
    progress: Progress,
    outcome: Outcome | undefined,
    failure: { error: ApiError; unexpected: boolean } | undefined,
  ): void {
    const { services } = this;
    const trace = progress.trace;
    const error = failure?.error ?? outcome?.error;
    const usage = outcome?.usage;
    // The prices of whatever served the request (a fallback may have its own), else the requested model's.
    const pricing = trace?.served?.pricing ?? progress.route?.model.pricing;
    // Nothing generated, nothing billed: a failed request with known prices costs 0, not "unknown".
    const costUsd = usage ? costOf(usage, pricing) : pricing && trace ? 0 : undefined;
    // The reservation becomes what was really used (nothing, when the upstream refused the request).
    const settling = progress.admission.settle({ tokens: usage?.totalTokens ?? 0, costUsd: costUsd ?? 0 });
    if (progress.settledToEnd) void Promise.resolve(settling).then(progress.settledToEnd);

    const clientLeft = cancellation.aborted && cancellation.reason === 'client_closed';
    const status = clientLeft && error ? 499 : (error?.status ?? (response.statusCode || 200));
    const finishedAtPrecise = performance.now();
    if (failure && !failure.unexpected && failure.error.status >= 500) {
      const attempted = trace && (trace.served ?? lastDeploymentAttempt(trace));
      services.metrics.upstreamErrors.inc({
        provider: attempted?.provider ?? 'none',
        code: failure.error.code ?? 'none',
      });
    }
    const modelLabel = progress.model && services.catalog.byName.has(progress.model) ? progress.model : 'other';
    services.metrics.recordRequest(
      endpoint.name,
      status,
      modelLabel,
      progress.stream,
      (finishedAtPrecise - arrival.startedAtPrecise) / 1000,
    );
    const firstTokenAt = outcome?.firstTokenAt;
    if (firstTokenAt !== undefined) {
      services.metrics.timeToFirstToken.observe((firstTokenAt - arrival.startedAtPrecise) / 1000, modelLabel);
    }
    const finished: FinishedRequest = {
      requestId: arrival.requestId,
      endpoint: endpoint.name,
      startedAt: arrival.startedAt,
      startedAtPrecise: arrival.startedAtPrecise,
      finishedAtPrecise,
      principal: progress.principal,
      model: progress.model,
      stream: progress.stream,
      status,
      outcome: clientLeft && error ? 'cancelled' : error ? 'error' : 'success',
      error,
      usage,
      costUsd,
      firstTokenAt,
      userAgent: arrival.userAgent,
      requestBody: progress.requestBody,
      responseBody: outcome?.responseBody,
      trace,
    };
    const row = toLogRow(finished);
    if (row) services.logWriter.enqueue(row);
  }
}
