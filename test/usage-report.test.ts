import { beforeAll, describe, expect, it } from 'vitest';
import { spendByAccount } from '../src/db/repositories/usage.js';
import { latencyBucketBounds, latencyBucketOf } from '../src/db/usage-rollup-layout.js';
import { createRequestLogBatchWriter } from '../src/request-log/batch-writer.js';
import { RowBatch } from '../src/request-log/row-batch.js';
import type { RequestLogInsert } from '../src/request-log/row-layout.js';
import { groupNamesFrom } from '../src/usage/group-names.js';
import { buildUsageReport, histogramPercentile, type UsageTotals } from '../src/usage/usage-report.js';
import { accountId } from './support/console.js';
import { useGatewayWithMock } from './support/gateway-fixture.js';

/**
 * Usage reports against a brute-force computation over the same log rows: thousands of rows over ten days, among
 * them model lists (no model, a millisecond each) that count as requests but stay out of latency figures.
 */

const setup = useGatewayWithMock({ config: { request_log: { retention: '3650d' } } });

let account: string;
const rows: RequestLogInsert[] = [];
const day = 86_400_000;
const start = Date.UTC(2026, 2, 1);

let seed = 7;
const random = () => {
  seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
  return seed / 2_147_483_648;
};

beforeAll(async () => {
  // The rows are dated March 2026: retention (which first runs 5 s after start) must not take them mid-test.
  account = await accountId(setup.gateway, 'acme');
  for (let index = 0; index < 12_000; index++) {
    // Most traffic on day 3 (a burst), the rest spread thinly.
    const createdAt =
      index < 8_000 ? start + 3 * day + Math.floor(random() * 3_600_000) : start + Math.floor(random() * 10 * day);
    const roll = random();
    const outcome = roll < 0.9 ? 'success' : roll < 0.97 ? 'error' : 'cancelled';
    const modelList = index % 10 === 9;
    const prompt = outcome === 'success' ? Math.floor(random() * 500) : null;
    const completion = outcome === 'success' ? Math.floor(random() * 200) : null;
    rows.push({
      request_id: `req_usage_${index}`,
      created_at: createdAt,
      account_id: account,
      key_id: `key_${index % 3}`,
      key_name: `app-${index % 3}`,
      model: modelList ? '' : (['mock', 'gpt-4o-mini'][index % 2] ?? 'mock'),
      endpoint: modelList ? 'models' : 'chat_completions',
      status: outcome === 'success' ? 200 : outcome === 'error' ? 502 : 499,
      outcome,
      stream: 0,
      usage_estimated: 0,
      latency_ms: modelList ? 1 : Math.floor(random() * 3000),
      prompt_tokens: prompt,
      completion_tokens: completion,
      total_tokens: prompt === null || completion === null ? null : prompt + completion,
      cost_usd: prompt === null ? null : prompt / 1e6,
    });
  }
  // Through the gateway's own batch writer (on its connection, not the worker thread), so the rows are what it writes.
  await createRequestLogBatchWriter(setup.gateway.gateway.database)(RowBatch.of(rows));
});

function nearestRank(values: number[], percentile: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((first, second) => first - second);
  return sorted[Math.ceil((percentile / 100) * sorted.length) - 1] ?? null;
}

/** The histogram bucket's bounds around a latency: a percentile read from rollups lies within them. */
function bucketRange(latency: number | null): [number, number] | null {
  if (latency === null) return null;
  const index = latencyBucketOf(latency);
  return [index === 0 ? 0 : (latencyBucketBounds[index - 1] as number), latencyBucketBounds[index] ?? Infinity];
}

function expectLatencyWithin(actual: number | null, exact: number | null, where: string): void {
  const range = bucketRange(exact);
  if (range === null) {
    expect(actual, where).toBeNull();
    return;
  }
  expect(actual, where).not.toBeNull();
  expect(actual as number, where).toBeGreaterThanOrEqual(range[0]);
  expect(actual as number, where).toBeLessThanOrEqual(range[1]);
}

function expected(selected: RequestLogInsert[]) {
  const latencies = selected
    .filter((row) => row.outcome === 'success' && row.endpoint === 'chat_completions')
    .map((row) => row.latency_ms);
  return {
    requests: selected.length,
    errors: selected.filter((row) => row.outcome === 'error').length,
    cancelled: selected.filter((row) => row.outcome === 'cancelled').length,
    promptTokens: selected.reduce((sum, row) => sum + (row.prompt_tokens ?? 0), 0),
    completionTokens: selected.reduce((sum, row) => sum + (row.completion_tokens ?? 0), 0),
    latencyP50Ms: nearestRank(latencies, 50),
    latencyP95Ms: nearestRank(latencies, 95),
  };
}

function expectTotals(actual: UsageTotals, rows: RequestLogInsert[], where: string): void {
  const { latencyP50Ms, latencyP95Ms, ...counts } = expected(rows);
  expect(actual, where).toMatchObject(counts);
  expectLatencyWithin(actual.latencyP50Ms, latencyP50Ms, `${where} p50`);
  expectLatencyWithin(actual.latencyP95Ms, latencyP95Ms, `${where} p95`);
}

describe('usage reports', () => {
  it('reads nearest-rank percentiles from a histogram to within their bucket', () => {
    const values = Array.from({ length: 1001 }, () => Math.floor(random() * 5000));
    const histogram = new Array(latencyBucketBounds.length + 1).fill(0);
    for (const value of values) histogram[latencyBucketOf(value)] += 1;
    for (const percentile of [1, 50, 95, 99, 100]) {
      expectLatencyWithin(
        histogramPercentile(histogram, percentile),
        nearestRank(values, percentile),
        `p${percentile}`,
      );
    }
    expect(histogramPercentile(new Array(latencyBucketBounds.length + 1).fill(0), 50)).toBeNull();
  });

  // Each reads a different rollup (the narrowest keeping what it filters and groups by): per account alone, per key,
  // per account and model, and across accounts (only this account has rows in these days) per model or in all.
  for (const [bucket, groupBy, across] of [
    ['day', 'none', false],
    ['hour', 'key', false],
    ['day', 'model', false],
    ['hour', 'model', true],
    ['hour', 'none', true],
  ] as const) {
    it(`agrees with the log rows exactly (${bucket} buckets, grouped by ${groupBy}${across ? ', across accounts' : ''})`, async () => {
      const bucketMs = bucket === 'day' ? day : 3_600_000;
      const firstBucket = start / bucketMs;
      const endBucket = (start + 10 * day) / bucketMs;
      const db = setup.gateway.gateway.database.db;
      const report = await buildUsageReport(
        db,
        { accountId: across ? undefined : account, firstBucket, endBucket, bucket, offsetMinutes: 0, groupBy },
        groupNamesFrom(db),
      );
      expectTotals(report.totals, rows, 'totals');
      expect(report.totals.costUsd).toBeCloseTo(
        rows.reduce((sum, row) => sum + (row.cost_usd ?? 0), 0),
        9,
      );
      // Every series there is, and no other: each one is then checked against the rows below.
      const seriesIds = { none: [null], key: ['key_0', 'key_1', 'key_2'], model: ['', 'gpt-4o-mini', 'mock'] }[groupBy];
      expect(report.series.map((series) => series.id).sort()).toEqual(seriesIds);
      for (const series of report.series) {
        const ofSeries = rows.filter((row) =>
          groupBy === 'key' ? row.key_id === series.id : groupBy === 'model' ? row.model === series.id : true,
        );
        expectTotals(series.totals, ofSeries, `series ${series.id}`);
        // The keys are not in api_keys: they are named by id.
        if (groupBy === 'key') expect(series.name).toBe(series.id);
        if (groupBy === 'model' && series.id === '') expect(series.label).toBe('(no model)');
        expect(series.points).toHaveLength(endBucket - firstBucket);
        for (const point of series.points) {
          const from = Date.parse(point.start);
          const inBucket = ofSeries.filter((row) => row.created_at >= from && row.created_at < from + bucketMs);
          expectTotals(point, inBucket, point.start);
        }
      }
    });
  }

  // Local days come from daily rollups corrected by some hours of the hourly ones (usage/local-days.ts): each offset
  // puts the run boundary elsewhere, or nowhere (+30 min: every hour stays in its UTC day).
  for (const offsetMinutes of [-300, 60, 330, 30, -720, 840, -45]) {
    it(`agrees with the log rows per local day (UTC${offsetMinutes >= 0 ? '+' : ''}${offsetMinutes} min, per model)`, async () => {
      const offsetMs = offsetMinutes * 60_000;
      // Local days from the 2nd to the 9th: the rows reach past both ends, so the edges are corrected too.
      const firstBucket = start / day + 1;
      const endBucket = start / day + 9;
      const db = setup.gateway.gateway.database.db;
      const report = await buildUsageReport(
        db,
        { accountId: account, firstBucket, endBucket, bucket: 'day', offsetMinutes, groupBy: 'model' },
        groupNamesFrom(db),
      );
      // An hour belongs to the local day it starts in.
      const localDay = (row: RequestLogInsert) =>
        Math.floor((Math.floor(row.created_at / 3_600_000) * 3_600_000 + offsetMs) / day);
      const inRange = rows.filter((row) => localDay(row) >= firstBucket && localDay(row) < endBucket);
      expectTotals(report.totals, inRange, 'totals');
      expect(report.totals.costUsd).toBeCloseTo(
        inRange.reduce((sum, row) => sum + (row.cost_usd ?? 0), 0),
        9,
      );
      for (const series of report.series) {
        expect(series.points).toHaveLength(endBucket - firstBucket);
        series.points.forEach((point, index) => {
          const ofPoint = inRange.filter((row) => row.model === series.id && localDay(row) === firstBucket + index);
          expectTotals(point, ofPoint, `${series.id} ${point.start}`);
          expect(point.costUsd).toBeGreaterThanOrEqual(0);
        });
      }
      expect(report.series.map((series) => series.id).sort()).toEqual(
        [...new Set(inRange.map((row) => row.model))].sort(),
      );
    });
  }

  it('reads the same across accounts whichever way the engine reads them (loose scan on SQLite)', async () => {
    const database = setup.gateway.gateway.database;
    const request = {
      firstBucket: start / day,
      endBucket: start / day + 10,
      bucket: 'day',
      offsetMinutes: -300,
      groupBy: 'account',
    } as const;
    const plain = await buildUsageReport(database.db, request);
    const shaped = await buildUsageReport(database.db, { ...request, dialect: database.dialect });
    expect(shaped).toEqual(plain);
    expect(plain.series.find((series) => series.id === account)?.totals.requests).toBe(
      rows.filter(
        (row) =>
          Math.floor((Math.floor(row.created_at / 3_600_000) * 3_600_000 - 18_000_000) / day) >= request.firstBucket,
      ).length,
    );
    // Rows read as arrays (the API's way) and as Kysely's objects make the same report.
    for (const groupBy of ['account', 'model', 'none'] as const) {
      for (const bucket of ['day', 'hour'] as const) {
        const size = bucket === 'day' ? day : 3_600_000;
        const shape = { ...request, groupBy, bucket, firstBucket: start / size, endBucket: start / size + 240 };
        const fromObjects = await buildUsageReport(database.db, shape);
        const fromArrays = await buildUsageReport(database.db, { ...shape, readArrays: database.readArrays });
        expect(fromArrays).toEqual(fromObjects);
        expect(fromArrays.totals.requests).toBeGreaterThan(0);
      }
    }
    const spend = await spendByAccount(database.db, start, start + 10 * day, database.dialect);
    expect(spend.find((row) => row.accountId === account)).toMatchObject({ requests: rows.length });
  });
});
