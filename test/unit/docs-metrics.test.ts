import { describe, expect, it } from 'vitest';
import { createMetrics } from '../../src/observability/metrics.js';
import { codeSpans, readDoc, tablesOf } from '../support/markdown.js';

/**
 * docs/operations.md's metrics table against the registry /metrics is rendered from: every metric the gateway
 * exports has a row with exactly its labels, and every metric the table names exists. `switchboard_process_*` stands
 * for prom-client's process metrics under that prefix.
 */

const metrics = createMetrics({ queueDepth: () => 0, inFlight: () => 0 });
const exported = metrics.registry.getMetricsAsArray().map((metric) => ({
  name: metric.name,
  labels: [...((metric as unknown as { labelNames?: readonly string[] }).labelNames ?? [])].sort(),
}));

function documentedMetrics(): { name: string; labels: string[]; line: number }[] {
  const table = tablesOf(readDoc('docs/operations.md')).find((candidate) => candidate.header[0] === 'Metric');
  if (!table) throw new Error('docs/operations.md has no metrics table');
  return table.rows.flatMap((row) =>
    codeSpans(row.cells[0] ?? '').map((span) => {
      const match = /^([\w*]+)(?:\{([\w,]*)\})?$/.exec(span);
      if (!match) throw new Error(`docs/operations.md line ${row.line}: "${span}" is not a metric name`);
      const labels = match[2] ? match[2].split(',').sort() : [];
      return { name: match[1] as string, labels, line: row.line };
    }),
  );
}

const documented = documentedMetrics();
const prefixes = documented.filter((entry) => entry.name.endsWith('*')).map((entry) => entry.name.slice(0, -1));

describe('docs/operations.md and the metrics /metrics exports', () => {
  it('reads the registry', () => {
    expect(exported.map((metric) => metric.name)).toEqual(
      expect.arrayContaining(['switchboard_requests_total', 'switchboard_process_process_cpu_seconds_total']),
    );
  });

  it('documents every metric with its labels', () => {
    const wrong: string[] = [];
    for (const metric of exported) {
      if (prefixes.some((prefix) => metric.name.startsWith(prefix))) continue;
      const row = documented.find((entry) => entry.name === metric.name);
      if (!row) wrong.push(`${metric.name}: no row`);
      else if (row.labels.join(',') !== metric.labels.join(',')) {
        wrong.push(`${metric.name}: labels {${metric.labels}}, documented {${row.labels}} (line ${row.line})`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('documents only metrics that exist', () => {
    const unknown = documented
      .filter((entry) =>
        entry.name.endsWith('*')
          ? !exported.some((metric) => metric.name.startsWith(entry.name.slice(0, -1)))
          : !exported.some((metric) => metric.name === entry.name),
      )
      .map((entry) => `${entry.name} (line ${entry.line})`);
    expect(unknown).toEqual([]);
  });
});
