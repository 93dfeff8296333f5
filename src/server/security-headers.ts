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
 * guess a content type other than the one sent (a JSON error echoing input must never be run as HTML or script), and
 * a browser that reached us over https is told to keep to https.
 */
export function securityHeaders(request: IncomingMessage, trustProxy: boolean): Record<string, string> {
  return cameOverTls(request, trustProxy)
    ? { 'x-content-type-options': 'nosniff', 'strict-transport-security': strictTransportSecurity }
    : { 'x-content-type-options': 'nosniff' };
}
