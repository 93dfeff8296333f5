import type { ProviderConfigOf } from '../../config/schema.js';
import type { ForwardCall } from '../provider.js';

/**
 * The headers of a request forwarded to Anthropic as the client wrote it: the client's `anthropic-version` (else the
 * provider's) and `anthropic-beta` merged with the provider's `beta` list (Claude Code's features depend on its flags
 * reaching Anthropic; the operator's must hold too), the provider's configured headers, and the provider's own key.
 * Nothing else of the client's: never its `Authorization` (the gateway key) or an `x-api-key` it may also send.
 */

/** Beta flags of the client and of the provider's configuration, each once, the client's first. */
export function mergeBetaFlags(client: string | undefined, configured: readonly string[]): string | undefined {
  const flags = new Set<string>();
  for (const flag of (client ?? '').split(',')) if (flag.trim() !== '') flags.add(flag.trim());
  for (const flag of configured) flags.add(flag);
  return flags.size > 0 ? [...flags].join(',') : undefined;
}

export function forwardHeaders(config: ProviderConfigOf<'anthropic'>, call: ForwardCall): Record<string, string> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: call.stream ? 'text/event-stream' : 'application/json',
    'anthropic-version': call.headers['anthropic-version'] ?? config.version,
    ...config.headers,
  };
  const beta = mergeBetaFlags(call.headers['anthropic-beta'], config.beta);
  if (beta !== undefined) headers['anthropic-beta'] = beta;
  if (config.apiKey) headers['x-api-key'] = config.apiKey;
  return headers;
}
