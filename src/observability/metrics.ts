import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

/**
 * Prometheus metrics, one registry per running gateway (never the global default registry, so tests and several
 * gateways in one process do not share counters). Label values are bounded: model labels come only from configured
 * model names, never from what a client typed.
 */
export interface Metrics {
  registry: Registry;
  /** One finished data-plane request: counted by route, status and model, timed by route and stream. */
  recordRequest(route: string, status: number, model: string, stream: boolean, seconds: number): void;
  requests: Counter<'route' | 'status' | 'model'>;
  requestDuration: Histogram<'route' | 'stream'>;
  timeToFirstToken: Histogram<'model'>;
  upstreamErrors: Counter<'provider' | 'code'>;
  /** Every upstream attempt the router made (several per request when it retried or failed over). */
  upstreamAttempts: Counter<'deployment' | 'outcome'>;
  /** 1 while a deployment is out of rotation (circuit open, or paused by an upstream's retry-after). */
  deploymentUnavailable: Gauge<'deployment'>;
  logRowsWritten: Counter;
  logFlushFailures: Counter;
  logQueueDepth: Gauge;
  inFlight: Gauge;
  limiterDecisions: Counter<'decision' | 'limit'>;
  limiterFallbacks: Counter<'kind' | 'policy'>;
  redisUp: Gauge;
  providerSlotsBusy: Gauge<'provider'>;
  providerQueueWaiting: Gauge<'provider'>;
}

/** How busy a provider with a fixed capacity (a local model's slots) is right now. */
export interface ProviderLoad {
  provider: string;
  slots: number;
  busy: number;
  waiting: number;
}

export interface MetricsSources {
  queueDepth: () => number;
  inFlight: () => number;
  /** Deployments with recorded failures and whether each is out of rotation now. */
  deploymentStates?: () => Array<{ deployment: string; unavailable: boolean }>;
  providerLoad?: () => ProviderLoad[];
}

export function createMetrics(options: MetricsSources): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'switchboard_process_' });
  const metrics = buildMetrics(registry, options);
  // prom-client hashes the label object on every call; the hot path reuses each label combination's child instead
  // (combinations are bounded: routes, status codes, configured model names).
  const counted = new Map<string, { inc(): void }>();
  const timed = new Map<string, { observe(value: number): void }>();
  metrics.recordRequest = (route, status, model, stream, seconds) => {
    const countKey = `${route}\u0000${status}\u0000${model}`;
    let counter = counted.get(countKey);
    if (!counter) {
      counter = metrics.requests.labels(route, String(status), model);
      counted.set(countKey, counter);
    }
    counter.inc();
    const timeKey = stream ? `${route}\u0000true` : `${route}\u0000false`;
    let timer = timed.get(timeKey);
    if (!timer) {
      timer = metrics.requestDuration.labels(route, stream ? 'true' : 'false');
      timed.set(timeKey, timer);
    }
    timer.observe(seconds);
  };
  return metrics;
}

function buildMetrics(registry: Registry, options: MetricsSources): Metrics {
  return {
    registry,
    recordRequest: () => {},
    requests: new Counter({
      name: 'switchboard_requests_total',
      help: 'Data-plane requests by route, HTTP status and model',
      labelNames: ['route', 'status', 'model'],
      registers: [registry],
    }),
    requestDuration: new Histogram({
      name: 'switchboard_request_duration_seconds',
      help: 'Data-plane request duration, from arrival to the last byte',
      labelNames: ['route', 'stream'],
      buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
      registers: [registry],
    }),
    timeToFirstToken: new Histogram({
      name: 'switchboard_time_to_first_token_seconds',
      help: 'Time from arrival to the first streamed content chunk',
      labelNames: ['model'],
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30],
      registers: [registry],
    }),
    upstreamErrors: new Counter({
      name: 'switchboard_upstream_errors_total',
      help: 'Failed upstream calls by provider and error code',
      labelNames: ['provider', 'code'],
      registers: [registry],
    }),
    upstreamAttempts: new Counter({
      name: 'switchboard_upstream_attempts_total',
      help: 'Upstream attempts by deployment and outcome (success, error, skipped)',
      labelNames: ['deployment', 'outcome'],
      registers: [registry],
    }),
    deploymentUnavailable: new Gauge({
      name: 'switchboard_deployment_unavailable',
      help: 'Deployments out of rotation: circuit open or paused by an upstream retry-after (1), back in (0)',
      labelNames: ['deployment'],
      registers: [registry],
      collect() {
        this.reset();
        for (const state of options.deploymentStates?.() ?? []) {
          this.set({ deployment: state.deployment }, state.unavailable ? 1 : 0);
        }
      },
    }),
    logRowsWritten: new Counter({
      name: 'switchboard_request_log_rows_written_total',
      help: 'Request-log rows written to the database',
      registers: [registry],
    }),
    logFlushFailures: new Counter({
      name: 'switchboard_request_log_flush_failures_total',
      help: 'Request-log batch writes that failed and will be retried',
      registers: [registry],
    }),
    logQueueDepth: new Gauge({
      name: 'switchboard_request_log_queue_depth',
      help: 'Request-log rows waiting to be written',
      registers: [registry],
      collect() {
        this.set(options.queueDepth());
      },
    }),
    limiterDecisions: new Counter({
      name: 'switchboard_limiter_decisions_total',
      help: 'Admission decisions for requests with limits: admitted, or refused and by which limit',
      labelNames: ['decision', 'limit'],
      registers: [registry],
    }),
    limiterFallbacks: new Counter({
      name: 'switchboard_limiter_fallbacks_total',
      help: 'Requests whose limits were decided without Redis (unreachable), by kind and configured policy',
      labelNames: ['kind', 'policy'],
      registers: [registry],
    }),
    redisUp: new Gauge({
      name: 'switchboard_redis_up',
      help: '1 when the Redis connection is ready, 0 when it is not (absent when Redis is not configured)',
      registers: [registry],
    }),
    inFlight: new Gauge({
      name: 'switchboard_in_flight_requests',
      help: 'Data-plane requests being served',
      registers: [registry],
      collect() {
        this.set(options.inFlight());
      },
    }),
    providerSlotsBusy: new Gauge({
      name: 'switchboard_provider_slots_busy',
      help: 'Generation slots in use, per provider with a fixed capacity (local models)',
      labelNames: ['provider'],
      registers: [registry],
      collect() {
        for (const load of options.providerLoad?.() ?? []) this.set({ provider: load.provider }, load.busy);
      },
    }),
    providerQueueWaiting: new Gauge({
      name: 'switchboard_provider_queue_waiting',
      help: 'Requests waiting for a generation slot, per provider with a fixed capacity (local models)',
      labelNames: ['provider'],
      registers: [registry],
      collect() {
        for (const load of options.providerLoad?.() ?? []) this.set({ provider: load.provider }, load.waiting);
      },
    }),
  };
}
