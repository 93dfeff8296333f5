import type { IncomingHttpHeaders } from 'node:http';

/**
 * What of the client's request, besides its body, goes on to an Anthropic upstream when a Messages request is
 * passed through: its `anthropic-version` and `anthropic-beta` (the provider adds its own flags, its headers and its
 * key: providers/anthropic/forward-headers.ts), and the `?beta=true` marker the Anthropic SDKs' beta client adds
 * (Claude Code does). Nothing else: never its `Authorization` (the gateway key), an `x-api-key` or another query.
 */

function headerValue(value: string | string[] | undefined): string | undefined {
  const joined = Array.isArray(value) ? value.join(',') : value;
  return joined === undefined || joined.trim() === '' ? undefined : joined.trim();
}

export function clientProtocolHeaders(client: IncomingHttpHeaders): Record<string, string> {
  const headers: Record<string, string> = {};
  const version = headerValue(client['anthropic-version']);
  if (version !== undefined) headers['anthropic-version'] = version;
  const beta = headerValue(client['anthropic-beta']);
  if (beta !== undefined) headers['anthropic-beta'] = beta;
  return headers;
}

/** `beta=true` when the client's URL carries that marker; undefined otherwise. */
export function betaQuery(clientUrl: string): string | undefined {
  const query = clientUrl.indexOf('?');
  if (query === -1) return undefined;
  return new URLSearchParams(clientUrl.slice(query + 1)).get('beta') === 'true' ? 'beta=true' : undefined;
}
