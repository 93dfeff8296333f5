import { Counter, Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { HotCounter, HotHistogram } from '../../src/observability/hot-metrics.js';

/** The hot-path metrics must expose exactly what prom-client's own would, given the same observations. */
describe('hot-path metrics', () => {
  it('expose a counter as prom-client does', async () => {
    const reference = new Registry();
    const hot = new Registry();
    const expected = new Counter({
      name: 'c_total',
      help: 'h',
      labelNames: ['route', 'status'],
      registers: [reference],
    });
    const counter = new HotCounter('c_total', 'h', ['route', 'status']).register(hot);
    for (const [route, status, amount] of [
      ['a', '200', 1],
      ['a', '200', 2],
      ['b', '404', 1],
      ['a "quoted"\\', '500', 5],
    ] as const) {
      expected.inc({ route, status }, amount);
      counter.inc(amount, route, status);
    }
    expect(await hot.metrics()).toBe(await reference.metrics());
  });

  it('expose a histogram as prom-client does', async () => {
    const reference = new Registry();
    const hot = new Registry();
    const buckets = [0.001, 0.01, 0.1, 1, 10];
    const expected = new Histogram({
      name: 'd_seconds',
      help: 'h',
      labelNames: ['route', 'stream'],
      buckets,
      registers: [reference],
    });
    const histogram = new HotHistogram('d_seconds', 'h', ['route', 'stream'], buckets).register(hot);
    const observations = [0.0005, 0.001, 0.002, 0.5, 3, 42, 0.1, 0.0999];
    observations.forEach((value, index) => {
      const labels = { route: index % 2 ? 'chat' : 'models', stream: index % 3 ? 'true' : 'false' };
      expected.observe(labels, value);
      histogram.observe(value, labels.route, labels.stream);
    });
    expect(await hot.metrics()).toBe(await reference.metrics());
  });

  it('forget everything on reset, as a registry reset asks', async () => {
    const registry = new Registry();
    const counter = new HotCounter('c_total', 'h', ['route']).register(registry);
    counter.inc(1, 'a');
    registry.resetMetrics();
    expect(await registry.metrics()).toBe('# HELP c_total h\n# TYPE c_total counter\n');
  });
});
