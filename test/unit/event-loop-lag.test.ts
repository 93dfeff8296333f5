import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { EventLoopLag } from '../../src/observability/event-loop-lag.js';
import { registerProcessMetrics } from '../../src/observability/process-metrics.js';

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitFor(condition: () => boolean) {
  const deadline = Date.now() + 5_000;
  while (!condition() && Date.now() < deadline) await wait(10);
  expect(condition()).toBe(true);
}

async function gaugeValue(registry: Registry, name: string): Promise<number | undefined> {
  const metric = (await registry.getMetricsAsJSON()).find((entry) => entry.name === name);
  return metric?.values[0]?.value;
}

describe('event-loop lag sampling', () => {
  it('starts with a request, and stops once a quiet interval passed with nothing in flight', async () => {
    let inFlight = 0;
    const lag = new EventLoopLag({ busy: () => inFlight > 0, quietIntervalMs: 30 });
    try {
      expect(lag.isSampling).toBe(false);
      lag.noteActivity();
      expect(lag.isSampling).toBe(true);
      // A request still in flight (a long stream) keeps it sampling with no new arrivals.
      inFlight = 1;
      await wait(150);
      expect(lag.isSampling).toBe(true);
      inFlight = 0;
      await waitFor(() => !lag.isSampling);
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
      // Block the loop for 60 ms while it is sampled: the next scrape sees it.
      await wait(30);
      const until = Date.now() + 60;
      while (Date.now() < until) {}
      await wait(30);
      expect(await gaugeValue(registry, 'test_nodejs_eventloop_lag_max_seconds')).toBeGreaterThanOrEqual(0.04);
    } finally {
      lag.close();
    }
  });
});
