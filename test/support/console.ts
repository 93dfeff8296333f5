import { expect } from 'vitest';
import { managementRoutes } from '../../src/api/manage/index.js';
import { addMember, createUser, type Role } from '../../src/users/service.js';
import type { TestGateway } from './gateway.js';

/** Helpers for tests of the management API: users, sign-in, and a small client that keeps cookie and CSRF token. */

export interface ApiResponse {
  status: number;
  headers: Headers;
  // biome-ignore lint/suspicious/noExplicitAny: tests assert on arbitrary response bodies
  body: any;
}

export interface ApiClient {
  request(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<ApiResponse>;
  /** The raw session cookie value (to test what others could do with it). */
  cookie?: string;
  csrfToken?: string;
}

export const testPassword = 'correct horse battery staple';

export async function apiRequest(
  baseUrl: string,
  method: string,
  path: string,
  options: { body?: unknown; headers?: Record<string, string> } = {},
): Promise<ApiResponse> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.body !== undefined) headers['content-type'] ??= 'application/json';
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers,
    body:
      options.body === undefined
        ? undefined
        : typeof options.body === 'string'
          ? options.body
          : JSON.stringify(options.body),
    redirect: 'manual',
  });
  const text = await response.text();
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON; the test sees the text
  }
  return { status: response.status, headers: response.headers, body };
}

/** Signs in through the API and returns a client that sends the session cookie and the CSRF token. */
export async function signIn(gateway: TestGateway, email: string, password = testPassword): Promise<ApiClient> {
  const response = await apiRequest(gateway.url, 'POST', '/api/session', { body: { email, password } });
  if (response.status !== 200) throw new Error(`sign-in failed: ${response.status} ${JSON.stringify(response.body)}`);
  const setCookie = response.headers.get('set-cookie') ?? '';
  const cookie = /switchboard_session=([^;]+)/.exec(setCookie)?.[1];
  if (!cookie) throw new Error(`no session cookie in ${setCookie}`);
  const csrfToken = response.body.csrfToken as string;
  return {
    cookie,
    csrfToken,
    request: (method, path, body, headers = {}) =>
      apiRequest(gateway.url, method, path, {
        body,
        headers: { cookie: `switchboard_session=${cookie}`, 'x-csrf-token': csrfToken, ...headers },
      }),
  };
}

/** A client authenticating with a management token. */
export function tokenClient(gateway: TestGateway, token: string): ApiClient {
  return {
    request: (method, path, body, headers = {}) =>
      apiRequest(gateway.url, method, path, { body, headers: { authorization: `Bearer ${token}`, ...headers } }),
  };
}

/** A client with no credentials at all. */
export function anonymousClient(gateway: TestGateway): ApiClient {
  return { request: (method, path, body, headers) => apiRequest(gateway.url, method, path, { body, headers }) };
}

/** Creates a user (optionally admin, optionally a member of an account) directly through the services. */
export async function createTestUser(
  gateway: TestGateway,
  options: { email: string; admin?: boolean; account?: string; role?: Role; password?: string },
) {
  const db = gateway.gateway.database.db;
  const user = await createUser(db, {
    email: options.email,
    password: options.password ?? testPassword,
    admin: options.admin,
  });
  if (options.account) await addMember(db, options.account, user.id, options.role ?? 'member');
  return user;
}

export async function accountId(gateway: TestGateway, name: string): Promise<string> {
  const row = await gateway.gateway.database.db
    .selectFrom('accounts')
    .select('id')
    .where('name', '=', name)
    .executeTakeFirstOrThrow();
  return row.id;
}

/**
 * Asserts a response body matches the route's documented response schema exactly: it parses, and parsing drops
 * nothing (zod strips unknown keys, so an undocumented field would make the two differ).
 */
export function expectDocumentedResponse(method: string, routePath: string, body: unknown): void {
  const route = managementRoutes.find((candidate) => candidate.method === method && candidate.path === routePath);
  if (!route) throw new Error(`no route ${method} ${routePath}`);
  if (!route.response) throw new Error(`route ${method} ${routePath} documents no response body`);
  const parsed = route.response.safeParse(body);
  if (!parsed.success) {
    throw new Error(`${method} ${routePath} response does not match its schema: ${parsed.error.message}`);
  }
  expect(parsed.data).toEqual(body);
}
