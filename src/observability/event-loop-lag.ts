import { type IntervalHistogram, monitorEventLoopDelay } from 'node:perf_hooks';
import { Gauge, type Registry } from 'prom-client';

/**
 * The event-loop lag metrics of prom-client's default set (the same names and meanings), sampled only while the
 * server has work. prom-client samples every 10 ms for the life of the process: a timer that woke an idle gateway
 * ~100 times a second, most of its idle CPU (docs/performance.md#idle). Here sampling starts with the first request
 * after a quiet spell and stops once a whole quiet interval passed with no request arriving and none in flight. An
 * idle loop runs nothing that could lag, so what was not sampled reads 0.
 */
export class EventLoopLag {
  private readonly histogram: IntervalHistogram = monitorEventLoopDelay({ resolution: 10 });
  private sampling = false;
  private arrivals = 0;
  private arrivalsSeen = 0;
  private quietCheck: NodeJS.Timeout | undefined;

  constructor(
    private readonly options: {
      /** Whether requests are still being served (a long stream keeps the loop working with no new arrivals). */
      busy: () => boolean;
      quietIntervalMs?: number;
    },
  ) {}

  /** Whether the loop is being sampled now. */
  get isSampling(): boolean {
    return this.sampling;
  }

  /** A request arrived: one increment, and the sampling timer started again after a quiet spell. */
  noteActivity(): void {
    this.arrivals++;
    if (!this.sampling) this.startSampling();
  }

  register(registry: Registry, prefix: string): void {
    const histogram = this.histogram;
    // Registered first, as in prom-client: a scrape reads the metrics in order, and this one's collect sets the
    // others, from what was sampled since the last scrape.
    new Gauge({
      name: `${prefix}nodejs_eventloop_lag_seconds`,
      help: 'Lag of event loop in seconds.',
      registers: [registry],
      // Under `serve --workers`, how the workers' values are combined (cluster-metrics.ts): as prom-client's own.
      aggregator: 'average',
      collect() {
        const start = process.hrtime.bigint();
        setImmediate(() => this.set(Number(process.hrtime.bigint() - start) / 1e9));
        const sampled = histogram.count > 0;
        const seconds = (nanoseconds: number) => (sampled ? nanoseconds / 1e9 : 0);
        min.set(seconds(histogram.min));
        max.set(seconds(histogram.max));
        mean.set(seconds(histogram.mean));
        stddev.set(seconds(histogram.stddev));
        p50.set(seconds(histogram.percentile(50)));
        p90.set(seconds(histogram.percentile(90)));
        p99.set(seconds(histogram.percentile(99)));
        histogram.reset();
      },
    });
    const gauge = (name: string, help: string, aggregator: 'average' | 'min' | 'max' = 'average') =>
      new Gauge({ name: `${prefix}nodejs_eventloop_lag_${name}_seconds`, help, registers: [registry], aggregator });
    const min = gauge('min', 'The minimum recorded event loop delay.', 'min');
    const max = gauge('max', 'The maximum recorded event loop delay.', 'max');
    const mean = gauge('mean', 'The mean of the recorded event loop delays.');
    const stddev = gauge('stddev', 'The standard deviation of the recorded event loop delays.');
    const p50 = gauge('p50', 'The 50th percentile of the recorded event loop delays.');
    const p90 = gauge('p90', 'The 90th percentile of the recorded event loop delays.');
    const p99 = gauge('p99', 'The 99th percentile of the recorded event loop delays.');
  }

  close(): void {
    this.stopSampling();
  }

  private startSampling(): void {
    this.sampling = true;
    this.histogram.enable();
    this.arrivalsSeen = this.arrivals;
    this.quietCheck = setInterval(() => {
      if (this.arrivals === this.arrivalsSeen && !this.options.busy()) this.stopSampling();
      this.arrivalsSeen = this.arrivals;
    }, this.options.quietIntervalMs ?? 10_000);
    this.quietCheck.unref();
  }

  private stopSampling(): void {
    if (!this.sampling) return;
    this.sampling = false;
    this.histogram.disable();
    clearInterval(this.quietCheck);
    this.quietCheck = undefined;
  }
}
