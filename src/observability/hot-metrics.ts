import type { Metric, Registry } from 'prom-client';

/**
 * A counter and a histogram for the data plane's hot path. prom-client's own hash the label object on every inc()
 * and observe() (a real share of a request, docs/performance.md#hot-metrics); these keep plain numbers
 * per label combination and build the exposition only when /metrics is scraped. They register in the gateway's
 * prom-client registry like any of its metrics, and the text they produce is the one prom-client would.
 * Label values must come from bounded sets (routes, statuses, configured model and deployment names).
 */

type Labels = Record<string, string>;

interface MetricValue {
  labels: Record<string, string | number>;
  value: number;
  metricName?: string;
}

/** The part of prom-client's metric interface its Registry uses to expose a metric. */
abstract class RegisteredMetric {
  readonly aggregator = 'sum';
  abstract readonly type: 'counter' | 'histogram';

  constructor(
    readonly name: string,
    readonly help: string,
    protected readonly labelNames: readonly string[],
  ) {}

  protected labelsOf(values: ReadonlyArray<string | undefined>): Labels {
    const labels: Labels = {};
    this.labelNames.forEach((name, index) => {
      labels[name] = values[index] ?? '';
    });
    return labels;
  }

  protected abstract values(): MetricValue[];

  abstract reset(): void;

  async get() {
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values: this.values() };
  }

  register(registry: Registry): this {
    // Not one of prom-client's classes, but what its Registry reads of a metric: name, help, type, get(), reset().
    registry.registerMetric(this as unknown as Metric);
    return this;
  }
}

/**
 * The series of each label combination, found through one Map per label (values as they come, a missing one as
 * undefined). Not one Map keyed by the values joined into a string: building and hashing that string on every
 * lookup costs several times more than nested lookups of strings V8 has hashed before.
 */
class SeriesTable<Series> {
  private readonly root = new Map<string, Map<string | undefined, Map<string | undefined, Series>>>();
  private readonly all: Series[] = [];

  /** `create` makes the series of label values seen for the first time. */
  constructor(private readonly create: (first: string, second?: string, third?: string) => Series) {}

  /** The series of these label values. */
  get(first: string, second?: string, third?: string): Series {
    let byFirst = this.root.get(first);
    if (!byFirst) {
      byFirst = new Map();
      this.root.set(first, byFirst);
    }
    let bySecond = byFirst.get(second);
    if (!bySecond) {
      bySecond = new Map();
      byFirst.set(second, bySecond);
    }
    let series = bySecond.get(third);
    if (!series) {
      series = this.create(first, second, third);
      bySecond.set(third, series);
      this.all.push(series);
    }
    return series;
  }

  values(): readonly Series[] {
    return this.all;
  }

  clear(): void {
    this.root.clear();
    this.all.length = 0;
  }
}

export class HotCounter extends RegisteredMetric {
  readonly type = 'counter';
  private readonly series = new SeriesTable<{ labels: Labels; value: number }>((first, second, third) => ({
    labels: this.labelsOf([first, second, third]),
    value: 0,
  }));

  /** Adds `amount` to the series of these label values (one per label name, in order). */
  inc(amount: number, first: string, second?: string, third?: string): void {
    this.series.get(first, second, third).value += amount;
  }

  protected values(): MetricValue[] {
    return this.series.values().map((series) => ({ labels: series.labels, value: series.value }));
  }

  reset(): void {
    this.series.clear();
  }
}

export class HotHistogram extends RegisteredMetric {
  readonly type = 'histogram';
  private readonly series = new SeriesTable<{ labels: Labels; counts: Float64Array; sum: number; count: number }>(
    (first, second, third) => ({
      labels: this.labelsOf([first, second, third]),
      counts: new Float64Array(this.buckets.length),
      sum: 0,
      count: 0,
    }),
  );

  constructor(
    name: string,
    help: string,
    labelNames: readonly string[],
    /** Upper bounds, ascending. */
    private readonly buckets: readonly number[],
  ) {
    super(name, help, labelNames);
  }

  /** Records one observation in the series of these label values. */
  observe(value: number, first: string, second?: string, third?: string): void {
    const series = this.series.get(first, second, third);
    const buckets = this.buckets;
    // Counted in the first bucket that holds the value; the exposition makes the counts cumulative.
    for (let index = 0; index < buckets.length; index++) {
      if (value <= (buckets[index] as number)) {
        (series.counts as Float64Array)[index] = (series.counts[index] as number) + 1;
        break;
      }
    }
    series.sum += value;
    series.count++;
  }

  protected values(): MetricValue[] {
    const values: MetricValue[] = [];
    const bucketName = `${this.name}_bucket`;
    for (const series of this.series.values()) {
      let cumulative = 0;
      this.buckets.forEach((upperBound, index) => {
        cumulative += series.counts[index] as number;
        values.push({ labels: { le: upperBound, ...series.labels }, value: cumulative, metricName: bucketName });
      });
      values.push(
        { labels: { le: '+Inf', ...series.labels }, value: series.count, metricName: bucketName },
        { labels: series.labels, value: series.sum, metricName: `${this.name}_sum` },
        { labels: series.labels, value: series.count, metricName: `${this.name}_count` },
      );
    }
    return values;
  }

  reset(): void {
    this.series.clear();
  }
}
