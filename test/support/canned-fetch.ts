/**
 * A `fetch` for SDK clients (their `fetch` option, never the global one) that answers every call with one canned body
 * and records what it was sent: unit tests drive the real client libraries over output the gateway produced.
 */
export interface CannedFetch {
  fetch: typeof fetch;
  requests: Array<{ url: string; body: unknown }>;
}

export function cannedFetch(body: string, contentType: string, status = 200): CannedFetch {
  const requests: CannedFetch['requests'] = [];
  return {
    requests,
    fetch: async (input, init) => {
      const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
      const text = typeof init?.body === 'string' ? init.body : '';
      requests.push({ url, body: text === '' ? undefined : JSON.parse(text) });
      return new Response(body, { status, headers: { 'content-type': contentType } });
    },
  };
}
