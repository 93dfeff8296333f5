import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import type { Caller } from '../../access/account-access.js';
import { apiError } from '../../errors/api-error.js';
import { isValidCsrfToken } from '../../users/sessions.js';
import { notSignedIn, resolveCaller } from './caller.js';
import type { ManagementServices } from './services.js';

/**
 * One declaration per management route: method, path, who may call it, and zod schemas for its params, query, body
 * and response. The same declarations register the Fastify routes and produce /api/openapi.json, so the document
 * cannot drift from what the server accepts.
 *
 * Every route gets here, in this order: the caller (management token or session cookie), CSRF for state changes
 * made with a cookie, then validation. Handlers receive typed input and return the response body.
 */

export type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';

/** public: anyone (the caller is resolved when present); user: signed in or a token; session: the console only. */
export type RouteAuth = 'public' | 'user' | 'session';

// biome-ignore lint/suspicious/noExplicitAny: the route table holds routes of every input type
export type AnyRoute = RouteDefinition<any, any, any, any>;

export interface RouteContext<Params, Query, Body, Auth extends RouteAuth> {
  caller: Auth extends 'public' ? Caller | undefined : Caller;
  params: Params;
  query: Query;
  body: Body;
  request: FastifyRequest;
  reply: FastifyReply;
  services: ManagementServices;
  /** The body's bytes exactly as received, for routes declared with rawBody (signature checks). */
  rawBody: Buffer | undefined;
}

export interface RouteDefinition<Params, Query, Body, Auth extends RouteAuth> {
  method: Method;
  /** Fastify syntax: /api/accounts/:accountId/keys */
  path: string;
  tag: string;
  summary: string;
  description?: string;
  auth: Auth;
  /** Who may call it, for the documentation and the security tests: the check itself is in the handler. */
  access: 'anyone' | 'signed-in' | 'account-member' | 'account-owner' | 'admin';
  params?: z.ZodType<Params>;
  query?: z.ZodType<Query>;
  body?: z.ZodType<Body>;
  /** The success response body; omitted for 204. */
  response?: z.ZodType;
  /**
   * For routes that stream a download instead of JSON (the handler returns a Readable and sets content-type): each
   * media type it can answer with, and what the body holds.
   */
  streams?: Record<string, string>;
  /** Keep the body's bytes as received (a signature over them is checked); it is still parsed and validated. */
  rawBody?: boolean;
  status?: 200 | 201 | 204;
  handle(context: RouteContext<Params, Query, Body, Auth>): Promise<unknown>;
}

/** Declares a route, inferring its input types from its schemas. */
export function defineRoute<
  Params = Record<string, never>,
  Query = Record<string, never>,
  Body = undefined,
  Auth extends RouteAuth = RouteAuth,
>(route: RouteDefinition<Params, Query, Body, Auth>): RouteDefinition<Params, Query, Body, Auth> {
  return route;
}

/** Whether any string inside the value holds a NUL character (PostgreSQL text cannot store one). */
function containsNul(value: unknown): boolean {
  if (typeof value === 'string') return value.includes('\u0000');
  if (Array.isArray(value)) return value.some(containsNul);
  if (value !== null && typeof value === 'object') {
    return Object.entries(value).some(([key, item]) => key.includes('\u0000') || containsNul(item));
  }
  return false;
}

/** Turns the first zod issue into the OpenAI-style 400, naming the parameter. */
function parseInput<T>(schema: z.ZodType<T> | undefined, value: unknown, where: string): T {
  if (!schema) return (where === 'body' ? undefined : {}) as T;
  if (containsNul(value)) throw apiError('invalid_value', `The ${where} must not contain NUL characters.`);
  const result = schema.safeParse(value ?? (where === 'body' ? undefined : {}));
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const path = issue?.path.map(String).join('.') ?? '';
  if (where === 'body' && value === undefined) throw apiError('missing_body', 'This request needs a JSON body.');
  // An unknown field is the bad field itself (zod reports it at the object holding it, and names it in its message).
  const unknownKey = issue?.code === 'unrecognized_keys' ? issue.keys[0] : undefined;
  const param = unknownKey === undefined ? path : path ? `${path}.${unknownKey}` : unknownKey;
  throw apiError(
    'invalid_value',
    `Invalid ${where}${path ? ` field '${path}'` : ''}: ${issue?.message ?? 'invalid value'}`,
    { param: param || null },
  );
}

const safeMethods = new Set(['GET', 'HEAD', 'OPTIONS']);

export function registerRoutes(app: FastifyInstance, routes: readonly AnyRoute[], services: ManagementServices): void {
  const rawBodies = new WeakMap<FastifyRequest, Buffer>();
  const handlerOf = (route: AnyRoute) => async (request: FastifyRequest, reply: FastifyReply) => {
    // Everything under /api is private to its caller: no shared cache may keep it.
    reply.header('cache-control', 'no-store');
    // A browser marks requests another site made it send; nothing legitimate on /api comes from another site.
    if (request.headers['sec-fetch-site'] === 'cross-site') {
      throw apiError('cross_site_request', 'Cross-site requests are not accepted.');
    }
    const caller = await resolveCaller(request, services);
    if (route.auth !== 'public' && !caller) throw notSignedIn();
    if (route.auth === 'session' && caller?.via !== 'session') {
      throw apiError('session_only', 'This can only be done from a signed-in console session, not with a token.');
    }
    if (caller?.via === 'session' && !safeMethods.has(request.method)) {
      const presented = request.headers['x-csrf-token'];
      if (
        caller.sessionId === undefined ||
        !isValidCsrfToken(caller.sessionId, services.secret, Array.isArray(presented) ? presented[0] : presented)
      ) {
        throw apiError(
          'csrf_token_invalid',
          'Missing or invalid x-csrf-token header (get the token from GET /api/session).',
        );
      }
    }
    // JSON only: a plain-text or form body (which a cross-site form could send without a preflight) is refused.
    const contentType = request.headers['content-type'];
    if (request.body !== undefined && !/^application\/json\s*(;|$)/i.test(contentType ?? '')) {
      throw apiError('unsupported_media_type', 'Send the body as JSON, with Content-Type: application/json.');
    }
    const params = parseInput(route.params, request.params, 'path parameter');
    const query = parseInput(route.query, request.query, 'query parameter');
    const body = parseInput(route.body, request.body, 'body');
    const rawBody = rawBodies.get(request);
    const result = await route.handle({ caller, params, query, body, request, reply, services, rawBody });
    if (route.status === 204) return reply.code(204).send();
    return reply.code(route.status ?? 200).send(result);
  };

  void app.register(async (scope) => {
    const parseJson = scope.getDefaultJsonParser('error', 'error');
    // An empty body labelled JSON (`curl -X POST -H 'Content-Type: application/json'`) is no body: a route that needs
    // none answers, one that needs one says missing_body. Anything else goes through Fastify's own parser.
    scope.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
      if (body === '') done(null, undefined);
      else parseJson(request, body as string, done);
    });
    for (const route of routes.filter((candidate) => !candidate.rawBody)) {
      scope.route({ method: route.method, url: route.path, handler: handlerOf(route) });
    }
  });
  const rawRoutes = routes.filter((candidate) => candidate.rawBody);
  if (rawRoutes.length === 0) return;
  // A scope of their own, whose JSON parser also keeps the bytes (the other routes keep Fastify's parser).
  void app.register(async (scope) => {
    scope.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
      const bytes = body as Buffer;
      rawBodies.set(request, bytes);
      try {
        done(null, bytes.length === 0 ? undefined : JSON.parse(bytes.toString('utf8')));
      } catch {
        done(apiError('invalid_json', 'The body is not valid JSON.'), undefined);
      }
    });
    for (const route of rawRoutes) scope.route({ method: route.method, url: route.path, handler: handlerOf(route) });
  });
}
