import type { IncomingHttpHeaders } from 'node:http';
import type { ProviderConfigOf } from '../../../config/schema.js';

/**
 * What goes to an Anthropic upstream besides the body, when a Messages request is passed through: the client's
 * `anthropic-version` and `anthropic-beta` (Claude Code's features depend on them reaching Anthropic), the provider's
 * configured headers and beta flags, and the provider's own key. Nothing else of the client's is forwarded: never
 * its `Authorization` (the gateway key) or an `x-api-key` it may also send.
 */

export type NativeEndpoint = 'messages' | 'count_tokens';

function headerValue(value: string | string[] | undefined): string | undefined {
  const joined = Array.isArray(value) ? value.join(',') : value;
  return joined === undefined || joined.trim() === '' ? undefined : joined.trim();
}

/** Beta flags of the client and of the provider's configuration, each once, the client's first. */
function betaFlags(client: string | undefined, configured: readonly string[]): string | undefined {
  const flags = new Set<string>();
  for (const flag of (client ?? '').split(',')) if (flag.trim() !== '') flags.add(flag.trim());
  for (const flag of configured) flags.add(flag);
  return flags.size > 0 ? [...flags].join(',') : undefined;
}

export function nativeRequestHeaders(
  client: IncomingHttpHeaders,
  provider: ProviderConfigOf<'anthropic'>,
  stream: boolean,
): Record<string, string> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: stream ? 'text/event-stream' : 'application/json',
    'anthropic-version': headerValue(client['anthropic-version']) ?? provider.version,
    ...provider.headers,
  };
  const beta = betaFlags(headerValue(client['anthropic-beta']), provider.beta);
  if (beta !== undefined) headers['anthropic-beta'] = beta;
  if (provider.apiKey) headers['x-api-key'] = provider.apiKey;
  return headers;
}

/**
 * The upstream path: `{base_url}/messages` or `{base_url}/messages/count_tokens`. The Anthropic SDKs' beta client
 * adds `?beta=true` (Claude Code does); that marker is kept, any other query of the client's is not forwarded.
 */
export function nativePath(provider: ProviderConfigOf<'anthropic'>, endpoint: NativeEndpoint, clientUrl = ''): string {
  const base = new URL(provider.baseUrl).pathname.replace(/\/+$/, '');
  const path = endpoint === 'messages' ? `${base}/messages` : `${base}/messages/count_tokens`;
  const query = clientUrl.indexOf('?');
  const beta = query === -1 ? null : new URLSearchParams(clientUrl.slice(query + 1)).get('beta');
  return beta === 'true' ? `${path}?beta=true` : path;
}
