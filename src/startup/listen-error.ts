/**
 * Why a listener could not start, in one line an operator can act on, instead of Node's "listen EACCES: permission
 * denied 127.0.0.1:80". `what` names the listener ("the gateway", "the metrics listener") and the setting to change.
 */
export function describeListenError(error: unknown, host: string, port: number, what: string): string {
  const code = (error as NodeJS.ErrnoException).code;
  const address = `${host.includes(':') ? `[${host}]` : host}:${port}`;
  const prefix = `${what} cannot listen on ${address}`;
  switch (code) {
    case 'EADDRINUSE':
      return `${prefix}: the port is already in use by another process (another switchboard?); stop it or choose another port`;
    case 'EACCES':
    case 'EPERM':
      return port < 1024
        ? `${prefix}: ports below 1024 need root or the CAP_NET_BIND_SERVICE capability; choose a port from 1024 up (a reverse proxy can serve port ${port})`
        : `${prefix}: permission denied by the system`;
    case 'EADDRNOTAVAIL':
      return `${prefix}: ${host} is not an address of this machine (0.0.0.0 listens on every interface)`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'EAI_FAIL':
    case 'EAI_NONAME':
      return `${prefix}: the host name ${host} does not resolve${code === 'EAI_AGAIN' ? ' (the name server did not answer)' : ''}`;
    case 'EAFNOSUPPORT':
      return `${prefix}: this machine does not support that address family (IPv6 disabled?)`;
    default:
      return `${prefix}: ${error instanceof Error ? error.message : String(error)}`;
  }
}

/** An error whose message is already the one line an operator should see. */
export class ListenError extends Error {}
