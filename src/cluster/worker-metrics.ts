import type { Worker } from 'node:cluster';
import { AggregatorRegistry, type Registry } from 'prom-client';
import { apiError } from '../errors/api-error.js';
import { askPrimary } from './ask-primary.js';

/**
 * /metrics under `serve --workers N`: whichever worker a scrape reaches answers for all of them. Each worker's own
 * counters would otherwise alternate between scrapes, and Prometheus reads every drop as a counter reset. The worker
 * asks the primary, which collects every worker's metrics with prom-client's AggregatorRegistry (counters and
 * histograms summed, gauges by the aggregator each declares) and sends the text back.
 */

interface MetricsRequest {
  channel: 'switchboard-worker';
  kind: 'metrics-request';
  id: number;
}

interface MetricsAnswer {
  channel: 'switchboard-primary';
  kind: 'metrics';
  id: number;
  text?: string;
  error?: string;
}

/** Longer than prom-client's own 5 s for collecting from the workers, so its error is the one reported. */
const answerTimeoutMs = 10_000;

const isMetricsRequest = (message: unknown): message is MetricsRequest =>
  (message as MetricsRequest | null)?.channel === 'switchboard-worker' &&
  (message as MetricsRequest).kind === 'metrics-request';

const isMetricsAnswer = (message: unknown): message is MetricsAnswer =>
  (message as MetricsAnswer | null)?.channel === 'switchboard-primary' && (message as MetricsAnswer).kind === 'metrics';

const unavailable = (reason: string) =>
  apiError('service_unavailable', `The metrics of every worker could not be collected: ${reason}.`);

/**
 * In a worker: answers the primary's collections from `registry`, and returns what a scrape of this worker serves
 * (the metrics of every worker, through the primary).
 */
export function metricsOfAllWorkers(registry: Registry): () => Promise<string> {
  AggregatorRegistry.setRegistries([registry]);
  // Its constructor installs the worker's answer to the primary's collection requests.
  new AggregatorRegistry();
  const primary = askPrimary(isMetricsAnswer, answerTimeoutMs);
  return async () => {
    const answer = await primary.ask(
      (id): MetricsRequest => ({ channel: 'switchboard-worker', kind: 'metrics-request', id }),
    );
    if (answer === undefined) throw unavailable('the primary process did not answer in time');
    if (answer.text === undefined) throw unavailable(answer.error ?? 'no answer');
    return answer.text;
  };
}

/** In the primary: answers a worker's request for the metrics of every worker. */
export function collectMetricsForWorkers(): (worker: Worker, message: unknown) => void {
  const aggregator = new AggregatorRegistry();
  return (worker, message) => {
    if (!isMetricsRequest(message)) return;
    const reply = (answer: Pick<MetricsAnswer, 'text' | 'error'>) => {
      if (worker.isConnected())
        worker.send({ channel: 'switchboard-primary', kind: 'metrics', id: message.id, ...answer });
    };
    aggregator.clusterMetrics().then(
      (text) => reply({ text }),
      (error: unknown) => reply({ error: error instanceof Error ? error.message : String(error) }),
    );
  };
}
