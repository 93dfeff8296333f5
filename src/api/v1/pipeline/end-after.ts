import type { ServerResponse } from 'node:http';

/**
 * Holds a response's end (its last bytes, and so the client's knowledge that it is over) until `before` has resolved:
 * the request is settled in the shared counters first, so the client's next request, on whichever worker or node,
 * cannot find its slot still taken or its reservation still counted. Only requests of keys with limits pay for it,
 * where the counters are shared. Ends called while it waits are the same end.
 */
export function endAfter(response: ServerResponse, before: () => Promise<void>): void {
  const end = response.end.bind(response) as (...args: unknown[]) => ServerResponse;
  let ending = false;
  response.end = ((...args: unknown[]) => {
    if (ending) return response;
    ending = true;
    const finish = () => end(...args);
    before().then(finish, finish);
    return response;
  }) as ServerResponse['end'];
}
