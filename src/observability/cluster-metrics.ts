import type { Worker } from 'node:cluster';
import { AggregatorRegistry, type Registry } from 'prom-client';
import { type ApiError, apiError } from '../errors/api-error.js';

/**
 * `serve --workers N`: a scrape reaches whichever worker takes its connection, and each worker counts only its own
 * requests, so /metrics answers with every worker's metrics summed (prom-client's AggregatorRegistry, over the
 * cluster's IPC): the worker asks the primary, which gathers every worker's registry.
 */

const channel = 'switchboard-metrics';

interface MetricsRequest {
  channel: typeof channel;
  kind: 'request';
  id: number;
}

interface MetricsReply {
  channel: typeof channel;
  kind: 'reply';
  id: number;
  text?: string;
  error?: string;
}

function isMetricsMessage<Kind extends 'request' | 'reply'>(
  message: unknown,
  kind: Kind,
): message is Kind extends 'request' ? MetricsRequest : MetricsReply {
  const candidate = message as { channel?: unknown; kind?: unknown } | null;
  return candidate?.channel === channel && candidate.kind === kind;
}

/** In the primary: returns what answers one worker's requests for the whole server's metrics. */
export function primaryMetricsService(): (worker: Worker) => void {
  const aggregator = new AggregatorRegistry();
  return (worker) => {
    worker.on('message', (message: unknown) => {
      if (!isMetricsMessage(message, 'request')) return;
      const reply = (answer: Pick<MetricsReply, 'text' | 'error'>) => {
        if (worker.isConnected()) worker.send({ channel, kind: 'reply', id: message.id, ...answer });
      };
      aggregator.clusterMetrics().then(
        (text) => reply({ text }),
        (error: unknown) => reply({ error: error instanceof Error ? error.message : String(error) }),
      );
    });
  };
}

const unavailable = (reason: string): ApiError =>
  apiError('service_unavailable', `The workers' metrics could not be gathered (${reason}); retry the scrape.`);

/** How long a worker waits for the primary's sum: longer than prom-client's own 5 s wait for the workers. */
const primaryAnswerTimeoutMs = 8000;

/**
 * In a worker: offers the worker's registry to the primary's sums, and returns how to read the whole server's
 * metrics text (a 503 when the primary cannot gather them: a partial sum would look like counters going back).
 */
export function workerMetrics(registry: Registry): () => Promise<string> {
  AggregatorRegistry.setRegistries([registry]);
  // Constructing one installs prom-client's answer to the primary's requests in this worker.
  new AggregatorRegistry();
  const pending = new Map<number, { resolve: (text: string) => void; reject: (error: ApiError) => void }>();
  let nextId = 0;
  process.on('message', (message: unknown) => {
    if (!isMetricsMessage(message, 'reply')) return;
    const waiting = pending.get(message.id);
    pending.delete(message.id);
    if (message.text !== undefined) waiting?.resolve(message.text);
    else waiting?.reject(unavailable(message.error ?? 'no answer'));
  });
  return () =>
    new Promise<string>((resolve, reject) => {
      const id = nextId++;
      const timer = setTimeout(() => {
        pending.delete(id);
        reject(unavailable('the primary process did not answer'));
      }, primaryAnswerTimeoutMs);
      timer.unref();
      const settle =
        <T>(finish: (value: T) => void) =>
        (value: T) => {
          clearTimeout(timer);
          finish(value);
        };
      pending.set(id, { resolve: settle(resolve), reject: settle(reject) });
      process.send?.({ channel, kind: 'request', id } satisfies MetricsRequest);
    });
}
