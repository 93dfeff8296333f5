import { Counter, Gauge, Registry } from 'prom-client';
import type { EventLoopLag } from './event-loop-lag.js';
import { HotCounter, HotHistogram } from './hot-metrics.js';
import { registerProcessMetrics } from './process-metrics.js';

/**
 * Prometheus metrics, one registry per running gateway (never the global default registry, so tests and several
 * gateways in one process do not share counters). Label values are bounded: model labels come only from configured
 * model names, never from what a client typed.
 */
export interface Metrics {
  registry: Registry;
  /** The text a scrape gets: this registry's, or under `serve --workers` every worker's (cluster/worker-metrics.ts). */
  exposition: () => Promise<string>;
  /** Told of every request that arrives: the event-loop lag is sampled only while there are some. */
  eventLoopLag: EventLoopLag;
  /** One finished data-plane request: counted by route, status and model, timed by route and stream. */
  recordRequest(route: string, status: number, model: string, stream: boolean, seconds: number): void;
  /** Labels: route, status, model (see hot-metrics.ts for why these four are not prom-client's own). */
  requests: HotCounter;
  /** Labels: route, stream. */
  requestDuration: HotHistogram;
  /** Labels: model. */
  timeToFirstToken: HotHistogram;
  upstreamErrors: Counter<'provider' | 'code'>;
  /** Every upstream attempt the router made (several per request when it retried or failed over). Labels: deployment, outcome. */
  upstreamAttempts: HotCounter;
  /** 1 while a deployment is out of rotation (circuit open, or paused by an upstream's retry-after). */
  deploymentUnavailable: Gauge<'deployment'>;
  logRowsWritten: Counter;
  logFlushFailures: Counter;
  logQueueDepth: Gauge;
  inFlight: Gauge;
  limiterDecisions: Counter<'decision' | 'limit'>;
  limiterFallbacks: Counter<'kind' | 'policy'>;
  redisUp: Gauge;
  /** Connections closed at once because server.max_connections were open. */
  connectionsDropped: Counter;
  providerSlotsBusy: Gauge<'provider'>;
  providerQueueWaiting: Gauge<'provider'>;
  providerSlotsRetired: Gauge<'provider'>;
  /** Upstream connections of HTTP providers (upstream/connection-shares.ts). Labels: provider. */
  upstreamConnectionsInUse: Gauge<'provider'>;
  upstreamConnectionsWaiting: Gauge<'provider'>;
}

/** How busy a provider with a fixed capacity (a local model's slots) is right now. */
export interface ProviderLoad {
  provider: string;
  slots: number;
  busy: number;
  waiting: number;
  /** Slots out of service for good (a generation that never stopped); counted in `busy` too. */
  retired: number;
}

export interface MetricsSources {
  queueDepth: () => number;
  inFlight: () => number;
  /** Deployments with recorded failures and whether each is out of rotation now. */
  deploymentStates?: () => Array<{ deployment: string; unavailable: boolean }>;
  providerLoad?: () => ProviderLoad[];
  /** Per HTTP provider: upstream connections in use, and calls waiting for one. */
  upstreamConnections?: () => Array<{ provider: string; inUse: number; waiting: number }>;
}

export function createMetrics(options: MetricsSources): Metrics {
  const registry = new Registry();
  const eventLoopLag = registerProcessMetrics(registry, 'switchboard_process_', () => options.inFlight() > 0);
  const metrics = buildMetrics(registry, eventLoopLag, options);
  metrics.recordRequest = (route, status, model, stream, seconds) => {
    metrics.requests.inc(1, route, String(status), model);
    metrics.requestDuration.observe(seconds, route, stream ? 'true' : 'false');
  };
  return metrics;
}

function buildMetrics(registry: Registry, eventLoopLag: EventLoopLag, options: MetricsSources): Metrics {
  return {
    registry,
    exposition: () => registry.metrics(),
    eventLoopLag,
    recordRequest: () => {},
    requests: new HotCounter('switchboard_requests_total', 'Data-plane requests by route, HTTP status and model', [
      'route',
      'status',
      'model',
    ]).register(registry),
    requestDuration: new HotHistogram(
      'switchboard_request_duration_seconds',
      'Data-plane request duration, from arrival to the last byte',
      ['route', 'stream'],
      [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
    ).register(registry),
    timeToFirstToken: new HotHistogram(
      'switchboard_time_to_first_token_seconds',
      'Time from arrival to the first streamed content chunk',
      ['model'],
      [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30],
    ).register(registry),
    upstreamErrors: new Counter({
      name: 'switchboard_upstream_errors_total',
      help: 'Failed upstream calls by provider and error code',
      labelNames: ['provider', 'code'],
      registers: [registry],
    }),
    upstreamAttempts: new HotCounter(
      'switchboard_upstream_attempts_total',
      'Upstream attempts by deployment and outcome (success, error, skipped)',
      ['deployment', 'outcome'],
    ).register(registry),
    deploymentUnavailable: new Gauge({
      name: 'switchboard_deployment_unavailable',
      help: 'Deployments out of rotation: ejected (until a probe succeeds) or paused by an upstream retry-after (1), back in (0)',
      labelNames: ['deployment'],
      registers: [registry],
      // Across workers (each reads its own copy of the shared health, which may lag an interval): out of rotation in any.
      aggregator: 'max',
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
      // Across workers: up only when every worker's connection is.
      aggregator: 'min',
    }),
    connectionsDropped: new Counter({
      name: 'switchboard_connections_dropped_total',
      help: 'Connections closed at once because server.max_connections connections were open',
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
    providerSlotsRetired: new Gauge({
      name: 'switchboard_provider_slots_retired',
      help: 'Generation slots taken out of service until a restart because their generation never stopped (local models)',
      labelNames: ['provider'],
      registers: [registry],
      collect() {
        for (const load of options.providerLoad?.() ?? []) this.set({ provider: load.provider }, load.retired);
      },
    }),
    upstreamConnectionsInUse: new Gauge({
      name: 'switchboard_upstream_connections_in_use',
      help: 'Upstream connections carrying a call, per HTTP provider (at most its max_connections)',
      labelNames: ['provider'],
      registers: [registry],
      collect() {
        for (const load of options.upstreamConnections?.() ?? []) this.set({ provider: load.provider }, load.inUse);
      },
    }),
    upstreamConnectionsWaiting: new Gauge({
      name: 'switchboard_upstream_connections_waiting',
      help: 'Calls waiting in the gateway for an upstream connection (the pool full, or the account at its share), per HTTP provider',
      labelNames: ['provider'],
      registers: [registry],
      collect() {
        for (const load of options.upstreamConnections?.() ?? []) this.set({ provider: load.provider }, load.waiting);
      },
    }),
  };
}
