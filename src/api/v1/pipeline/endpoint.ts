import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import type { ModelCapability } from '../../../config/schema.js';
import type { ApiError } from '../../../errors/api-error.js';
import type { RenderedError } from '../../../errors/render-openai.js';
import type { Principal } from '../../../keys/authenticate.js';
import type { Route } from '../../../routing/router.js';
import type { DispatchTrace } from '../../../routing/trace.js';
import type { CancelSignal } from '../../../server/cancellation.js';
import type { ParsedBody } from '../../../server/read-body.js';
import type { TokenUsage } from '../../../usage/usage.js';
import type { DataPlaneServices } from '../services.js';
import type { EndpointName } from './endpoint-names.js';

/**
 * What an endpoint is to the request pipeline (serve-request.ts). An endpoint contributes only what is its own: how
 * its request is read and checked, what it reserves against limits, and one handler that answers and returns an
 * outcome. Authentication, the body under its size limit, model authorization, limits and budgets, cancellation,
 * usage and cost, the log row, metrics and error rendering are the pipeline's.
 */

export type { EndpointName } from './endpoint-names.js';

/** What the pipeline reads of any request: the model it names (authorized), and whether it asks for a stream. */
export interface EndpointRequest {
  readonly model?: string | undefined;
  readonly stream?: unknown;
}

/** Where a request's values come from: the parsed JSON body (endpoints that take one) and the path's parameters. */
export interface RequestInput {
  body: unknown;
  params: Readonly<Record<string, string>>;
  /** The query string, without its `?` (empty when there is none). */
  query: string;
}

/** Tokens reserved against a key's and account's limits before the request runs; settled from real usage after. */
export interface TokenReservation {
  promptTokens: number;
  completionTokens: number;
}

export interface Endpoint<Request extends EndpointRequest = EndpointRequest> {
  readonly name: EndpointName;
  /** Whether a JSON body is read (under limits.max_body_size) and given to `parse`. */
  readonly readsBody: boolean;
  /** Whether the handler serves the request through dispatch (its attempts then go into the log row). */
  readonly dispatches: boolean;
  /**
   * The kind of model the endpoint needs (a model's configured `capabilities`); a request naming a model without it
   * is refused with 400 unsupported_model. Absent: `chat`, for endpoints that dispatch.
   */
  readonly modelCapability?: ModelCapability;
  /** How errors reach this endpoint's clients (OpenAI's shape, or Anthropic's on /v1/messages). */
  renderError(error: unknown, requestId: string): RenderedError;
  /** Checks the request and returns it typed; throws an ApiError naming the field at fault. */
  parse(input: RequestInput): Request;
  /** What the request reserves against limits and budgets; absent: the endpoint is not limited (e.g. /v1/models). */
  reserve?(request: Request, defaultCompletionTokens: number): TokenReservation;
  /**
   * Answers the request. Errors thrown before the response has started are rendered by the pipeline; a failure after
   * that is the handler's to report in-band, returned as the outcome's `error`.
   */
  handle(request: Request, exchange: Exchange, body: ParsedBody | undefined): Promise<Outcome>;
}

/** What a handler is given: everything about the request but the request itself, read-only. */
export interface Exchange {
  readonly requestId: string;
  readonly response: ServerResponse;
  readonly principal: Principal;
  /** Aborted when the client goes away or the server gives up on the request. */
  readonly signal: CancelSignal;
  /** Where dispatch records each attempt (the pipeline reads it for the log). */
  readonly trace: DispatchTrace;
  /** The requested model's route, when the request names a model. */
  readonly route: Route | undefined;
  readonly params: Readonly<Record<string, string>>;
  /** The client's headers and URL (path and query), for endpoints that pass protocol headers on (/v1/messages). */
  readonly headers: IncomingHttpHeaders;
  readonly url: string;
  readonly services: DataPlaneServices;
  /** Whether this account keeps request and response bodies in its log. */
  readonly logBodies: boolean;
}

/** What a handler returns: what the pipeline needs for usage, cost and the log row. */
export interface Outcome {
  /** A failure reported inside a response that had already started (a stream's in-band error). */
  error?: ApiError;
  /** Tokens used (reported by the upstream, or estimated and marked as such). */
  usage?: TokenUsage;
  /** When the first content reached the client (performance.now()). */
  firstTokenAt?: number;
  /** The response body as sent, for accounts that log bodies. */
  responseBody?: string;
}

/** An outcome with nothing to report (a successful answer that used no tokens). */
export const answered: Outcome = Object.freeze({});
