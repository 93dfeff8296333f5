import type { ServerResponse } from 'node:http';
import type { RenderedError } from '../../../errors/render-openai.js';
import { parseResetDuration } from '../../../limits/limiter.js';

/**
 * The gateway's own rate-limit state as the Anthropic surface reports it: `anthropic-ratelimit-{requests,tokens}-
 * {limit,remaining,reset}`, the reset as an RFC 3339 instant (Anthropic's form), read from the x-ratelimit-* headers
 * every limiter already renders (those stay too). An Anthropic upstream's own anthropic-ratelimit-* headers describe
 * the operator's quota and are never passed on; these describe the client's key and account.
 */
export function anthropicRateLimitHeaders(
  headers: Readonly<Record<string, string | number | readonly string[] | undefined>>,
  now = Date.now(),
): Record<string, string> {
  const rendered: Record<string, string> = {};
  for (const kind of ['requests', 'tokens'] as const) {
    const limit = headers[`x-ratelimit-limit-${kind}`];
    const remaining = headers[`x-ratelimit-remaining-${kind}`];
    const reset = parseResetDuration(String(headers[`x-ratelimit-reset-${kind}`] ?? ''));
    if (limit === undefined || remaining === undefined || reset === undefined) continue;
    rendered[`anthropic-ratelimit-${kind}-limit`] = String(limit);
    rendered[`anthropic-ratelimit-${kind}-remaining`] = String(remaining);
    // Whole seconds, rounded up: a client that waits until then finds the window replenished.
    const resetAt = Math.ceil((now + reset) / 1000) * 1000;
    rendered[`anthropic-ratelimit-${kind}-reset`] = new Date(resetAt).toISOString().replace('.000Z', 'Z');
  }
  return rendered;
}

/** Adds the Anthropic form of the limits the pipeline has set on an answer about to start. */
export function setAnthropicRateLimitHeaders(response: ServerResponse): void {
  // Most keys have no limits: then nothing is added and the headers are not copied.
  if (!response.hasHeader('x-ratelimit-limit-requests') && !response.hasHeader('x-ratelimit-limit-tokens')) return;
  const headers = anthropicRateLimitHeaders(response.getHeaders());
  for (const name in headers) response.setHeader(name, headers[name] as string);
}

/** The same on a refusal (a 429 carries the state of the window that refused it). */
export function withAnthropicRateLimitHeaders(rendered: RenderedError): RenderedError {
  return { ...rendered, headers: { ...rendered.headers, ...anthropicRateLimitHeaders(rendered.headers) } };
}
