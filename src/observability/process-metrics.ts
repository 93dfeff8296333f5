import type { Aggregator, Registry } from 'prom-client';
import gc from 'prom-client/lib/metrics/gc.js';
import heapSizeAndUsed from 'prom-client/lib/metrics/heapSizeAndUsed.js';
import heapSpacesSizeAndUsed from 'prom-client/lib/metrics/heapSpacesSizeAndUsed.js';
import osMemoryHeap from 'prom-client/lib/metrics/osMemoryHeap.js';
import processCpuTotal from 'prom-client/lib/metrics/processCpuTotal.js';
import processHandles from 'prom-client/lib/metrics/processHandles.js';
import processMaxFileDescriptors from 'prom-client/lib/metrics/processMaxFileDescriptors.js';
import processOpenFileDescriptors from 'prom-client/lib/metrics/processOpenFileDescriptors.js';
import processRequests from 'prom-client/lib/metrics/processRequests.js';
import processResources from 'prom-client/lib/metrics/processResources.js';
import processStartTime from 'prom-client/lib/metrics/processStartTime.js';
import version from 'prom-client/lib/metrics/version.js';
import { EventLoopLag } from './event-loop-lag.js';

/**
 * prom-client's default process metrics (what `collectDefaultMetrics` registers), each read when /metrics is scraped,
 * with the event-loop lag from event-loop-lag.ts instead of prom-client's, whose sampling timer never stops.
 * `collectDefaultMetrics` offers no way to leave one out, hence its modules one by one.
 */
/**
 * Under `serve --workers N`, the per-process values that a sum would make wrong (the rest are summed, prom-client's
 * default): a limit every worker has is the lowest one, the one that runs out first; the start time is the latest
 * worker's, which moves whenever a restarted worker's counters drop out of the sums.
 */
const acrossWorkers: Readonly<Record<string, Aggregator>> = {
  process_max_fds: 'min',
  process_start_time_seconds: 'max',
  nodejs_version_info: 'first',
};

export function registerProcessMetrics(registry: Registry, prefix: string, busy: () => boolean): EventLoopLag {
  const config = { prefix };
  for (const register of [
    processCpuTotal,
    processStartTime,
    osMemoryHeap,
    processOpenFileDescriptors,
    processMaxFileDescriptors,
    processResources,
    processHandles,
    processRequests,
    heapSizeAndUsed,
    heapSpacesSizeAndUsed,
    version,
    gc,
  ]) {
    register(registry, config);
  }
  for (const [name, aggregator] of Object.entries(acrossWorkers)) {
    const metric = registry.getSingleMetric(`${prefix}${name}`) as { aggregator: Aggregator } | undefined;
    if (metric) metric.aggregator = aggregator;
  }
  const lag = new EventLoopLag({ busy });
  lag.register(registry, prefix);
  return lag;
}
