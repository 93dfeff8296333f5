import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { EventLoopLag } from '../../src/observability/event-loop-lag.js';
import { registerProcessMetrics } from '../../src/observability/process-metrics.js';
import { waitFor } from '../support/wait.js';

async function gaugeValue(registry: Registry, name: string): Promise<number | undefined> {
  const metric = (await registry.getMetricsAsJSON()).find((entry) => entry.name === name);
  return metric?.values[0]?.value;
}

describe('event-loop lag sampling', () => {
  it('starts with a request, and stops once a quiet interval passed with nothing in flight', async () => {
    let inFlight = 0;
    // Each quiet interval with no arrival asks whether requests are in flight: counting the questions counts them.
    let quietChecks = 0;
    const busy = () => {
      quietChecks++;
      return inFlight > 0;
    };
    const lag = new EventLoopLag({ busy, quietIntervalMs: 30 });
    try {
      expect(lag.isSampling).toBe(false);
      lag.noteActivity();
      expect(lag.isSampling).toBe(true);
      // A request still in flight (a long stream) keeps it sampling with no new arrivals.
      inFlight = 1;
      await waitFor('four quiet intervals', () => quietChecks >= 4, { intervalMs: 5 });
      expect(lag.isSampling).toBe(true);
      inFlight = 0;
      await waitFor('sampling to stop', () => !lag.isSampling);
      lag.noteActivity();
      expect(lag.isSampling).toBe(true);
    } finally {
      lag.close();
    }
    expect(lag.isSampling).toBe(false);
  });

  it("reports the lag sampled since the last scrape under prom-client's names, and 0 when nothing was sampled", async () => {
    const registry = new Registry();
    const lag = registerProcessMetrics(registry, 'test_', () => false);
    try {
      const names = (await registry.getMetricsAsJSON()).map((metric) => metric.name);
      for (const name of ['min', 'max', 'mean', 'stddev', 'p50', 'p90', 'p99'])
        expect(names).toContain(`test_nodejs_eventloop_lag_${name}_seconds`);
      // The rest of prom-client's default set is there too.
      expect(names).toEqual(
        expect.arrayContaining([
          'test_process_cpu_seconds_total',
          'test_process_resident_memory_bytes',
          'test_nodejs_heap_size_used_bytes',
          'test_nodejs_gc_duration_seconds',
          'test_nodejs_version_info',
          'test_nodejs_eventloop_lag_seconds',
        ]),
      );
      expect(await gaugeValue(registry, 'test_nodejs_eventloop_lag_max_seconds')).toBe(0);
      lag.noteActivity();
      expect(lag.isSampling).toBe(true);
      // Node's sampler measures each tick from the one before, and a scrape resets it: no scrape from here on. A timer
      // due after the sampler's first tick (10 ms) runs after that tick, however slow the machine.
      await new Promise((resolve) => setTimeout(resolve, 15));
      const until = Date.now() + 60;
      while (Date.now() < until) {}
      // The sampler's timer, overdue since the block, runs before any timer set now.
      await new Promise((resolve) => setTimeout(resolve, 1));
      expect(await gaugeValue(registry, 'test_nodejs_eventloop_lag_max_seconds')).toBeGreaterThanOrEqual(0.04);
    } finally {
      lag.close();
    }
  });
});
