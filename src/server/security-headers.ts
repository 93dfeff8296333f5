import type { IncomingMessage } from 'node:http';

/** Whether the request reached us over TLS, directly or (only when the proxy is trusted) per X-Forwarded-Proto. */
export function cameOverTls(request: IncomingMessage, trustProxy: boolean): boolean {
  if ((request.socket as { encrypted?: boolean }).encrypted) return true;
  if (!trustProxy) return false;
  const forwarded = request.headers['x-forwarded-proto'];
  const first = (Array.isArray(forwarded) ? forwarded[0] : forwarded)?.split(',')[0]?.trim();
  return first === 'https';
}

/** A year: browsers that saw the console over https keep using https for it. */
const strictTransportSecurity = 'max-age=31536000';

/**
 * Headers on every response of the console, the management API and the health and metrics routes: browsers must not
 * guess a content type other than the one sent, and an answer (a JSON error echoing its input above all) is never a
 * page: it may load nothing, be framed by no one, send no referrer, and be read by no other origin's no-cors request.
 * Console pages replace the CSP with their own (console-assets.ts). A browser that reached us over https is told to
 * keep to https.
 */
const alwaysSent = {
  'x-content-type-options': 'nosniff',
  'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-resource-policy': 'same-origin',
};

export function securityHeaders(request: IncomingMessage, trustProxy: boolean): Record<string, string> {
  return cameOverTls(request, trustProxy)
    ? { ...alwaysSent, 'strict-transport-security': strictTransportSecurity }
    : alwaysSent;
}
