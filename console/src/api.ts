/**
 * The console's only way to the server: JSON requests to /api with the session cookie (sent by the browser; script
 * cannot read it) and the CSRF token (held in memory only, never in storage) on every state change.
 */

export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code: string | null,
    readonly param: string | null,
  ) {
    super(message);
    this.name = 'ApiFailure';
  }
}

export interface Api {
  get<T>(path: string): Promise<T>;
  post<T>(path: string, body?: unknown): Promise<T>;
  patch<T>(path: string, body: unknown): Promise<T>;
  delete<T>(path: string): Promise<T>;
  setCsrfToken(token: string | undefined): void;
}

export function createApi(onSignedOut: () => void): Api {
  let csrfToken: string | undefined;

  async function request<T>(method: string, path: string, body?: unknown): Promise<T> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (method !== 'GET' && csrfToken) headers['x-csrf-token'] = csrfToken;
    let response: Response;
    try {
      response = await fetch(`/api${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        credentials: 'same-origin',
        cache: 'no-store',
      });
    } catch {
      throw new ApiFailure(0, 'The server could not be reached. Check your connection and try again.', null, null);
    }
    if (response.status === 204) return undefined as T;
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    if (!response.ok) {
      const error = (parsed as { error?: { message?: string; code?: string | null; param?: string | null } })?.error;
      const failure = new ApiFailure(
        response.status,
        error?.message ?? `The server answered ${response.status}.`,
        error?.code ?? null,
        error?.param ?? null,
      );
      if (response.status === 401 && failure.code === 'not_signed_in') onSignedOut();
      throw failure;
    }
    return parsed as T;
  }

  return {
    get: (path) => request('GET', path),
    post: (path, body) => request('POST', path, body),
    patch: (path, body) => request('PATCH', path, body),
    delete: (path) => request('DELETE', path),
    setCsrfToken: (token) => {
      csrfToken = token;
    },
  };
}

/** A query string from the defined values of an object. */
export function queryString(values: Record<string, string | number | undefined | null>): string {
  const parameters = new URLSearchParams();
  for (const [name, value] of Object.entries(values)) {
    if (value !== undefined && value !== null && value !== '') parameters.set(name, String(value));
  }
  const text = parameters.toString();
  return text ? `?${text}` : '';
}
