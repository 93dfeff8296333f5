import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type AttemptColumns,
  attemptsJson,
  readAttempts,
  writeAttemptColumns,
} from '../../src/request-log/attempts-column.js';
import { toLogEntry } from '../../src/request-log/entry.js';
import { type FinishedRequest, toLogRow } from '../../src/request-log/record.js';
import type { RequestLogInsert, RequestLogRow } from '../../src/request-log/row-layout.js';
import type { AttemptRecord, DispatchTrace } from '../../src/routing/trace.js';

const attempt = (overrides: Partial<AttemptRecord> = {}): AttemptRecord => ({
  model: 'gpt-4o-mini',
  deployment: 'openai/gpt-4o-mini',
  provider: 'openai',
  upstreamModel: 'gpt-4o-mini',
  outcome: 'success',
  status: 200,
  code: null,
  waitedMs: 0,
  latencyMs: 412,
  ...overrides,
});

describe('the attempts column', () => {
  it('is the same text JSON.stringify writes', () => {
    const cases: AttemptRecord[][] = [
      [attempt()],
      [
        attempt({ outcome: 'error', status: 429, code: 'rate_limit_exceeded', waitedMs: 0, latencyMs: 37 }),
        attempt({ deployment: 'azure/gpt-4o-mini', provider: 'azure', waitedMs: 1250 }),
      ],
      [attempt({ outcome: 'skipped', deployment: '', provider: '', upstreamModel: '', status: 400, latencyMs: 0 })],
      // Names and codes that need escaping: quotes, backslashes, control and non-ASCII characters, a lone surrogate.
      [attempt({ model: 'say "hi"\\\n\u0001', code: 'bad\tcode "x"', upstreamModel: 'modèle-😀\ud800' })],
      [attempt({ latencyMs: Number.NaN, waitedMs: Number.POSITIVE_INFINITY, status: -0 })],
    ];
    for (const attempts of cases) {
      expect(attemptsJson(attempts)).toBe(JSON.stringify(attempts));
      expect(JSON.parse(attemptsJson(attempts))).toEqual(JSON.parse(JSON.stringify(attempts)));
    }
  });

  it('stays right for names seen again and for many distinct names', () => {
    for (let round = 0; round < 3; round++) {
      for (let index = 0; index < 1_500; index++) {
        const attempts = [attempt({ model: `model-${index}`, deployment: `provider/model-${index}` })];
        expect(attemptsJson(attempts)).toBe(JSON.stringify(attempts));
      }
    }
  });
});

/** The row a request served through `attempts` becomes, and the log entry read back from it. */
function logged(attempts: AttemptRecord[]) {
  const last = attempts[attempts.length - 1] as AttemptRecord;
  const served = attempts.findLast((item) => item.outcome === 'success');
  const routing: DispatchTrace = {
    attempts,
    droppedParameters: [],
    ...(served
      ? {
          served: {
            model: served.model,
            deployment: served.deployment,
            provider: served.provider,
            upstreamModel: served.upstreamModel,
            pricing: undefined,
          },
        }
      : {}),
  };
  const record: FinishedRequest = {
    requestId: 'req_1',
    endpoint: 'chat_completions',
    startedAt: 1_700_000_000_000,
    startedAtPrecise: 0,
    finishedAtPrecise: 500,
    principal: {
      accountId: 'acct_1',
      keyId: 'key_1',
      keyName: 'app',
      logBodies: false,
    } as FinishedRequest['principal'],
    model: attempts[0]?.model ?? 'gpt-4o-mini',
    stream: false,
    status: served ? 200 : last.status,
    outcome: served ? 'success' : 'error',
    error: undefined,
    usage: undefined,
    costUsd: undefined,
    firstTokenAt: undefined,
    userAgent: undefined,
    requestBody: undefined,
    responseBody: undefined,
    trace: routing,
  };
  const row = toLogRow(record) as RequestLogRow;
  return { row, entry: toLogEntry({ ...row, id: 1 }) };
}

describe('attempts a row implies', () => {
  it('leaves out the JSON of a single successful attempt and gives it back field for field', () => {
    const { row, entry } = logged([attempt()]);
    expect(row.attempts).toBeNull();
    expect(row.served_latency_ms).toBe(412);
    expect(entry.attempts).toEqual([attempt()]);
    expect(JSON.stringify(entry.attempts)).toBe(JSON.stringify([attempt()]));
  });

  it('writes the JSON whenever it says more than the row: retries, waits, failures, fallbacks', () => {
    const cases: AttemptRecord[][] = [
      [
        attempt({ outcome: 'error', status: 429, code: 'rate_limit_exceeded', latencyMs: 37 }),
        attempt({ waitedMs: 1250 }),
      ],
      [attempt({ waitedMs: 300 })],
      [attempt({ outcome: 'error', status: 502, code: 'upstream_error' })],
      [attempt({ outcome: 'skipped', deployment: '', provider: '', upstreamModel: '', status: 400, latencyMs: 0 })],
      [attempt({ latencyMs: Number.NaN })],
    ];
    for (const attempts of cases) {
      const { row, entry } = logged(attempts);
      expect(row.attempts).toBe(JSON.stringify(attempts));
      expect(entry.attempts).toEqual(JSON.parse(JSON.stringify(attempts)));
    }
  });

  it("keeps the served attempt's latency on every row that has one", () => {
    const { row } = logged([attempt({ outcome: 'error', status: 500, latencyMs: 20 }), attempt({ latencyMs: 90 })]);
    expect(row.served_latency_ms).toBe(90);
    expect(logged([attempt({ outcome: 'error', status: 500 })]).row.served_latency_ms).toBeNull();
  });

  it('reads rows written before the column existed (attempts JSON, no latency) as before', () => {
    const { row } = logged([attempt()]);
    const old = { ...row, id: 1, attempts: JSON.stringify([attempt()]), served_latency_ms: null };
    expect(toLogEntry(old).attempts).toEqual([attempt()]);
    expect(
      toLogEntry({ ...old, attempts: null, attempt_count: null, served_model: null, deployment: null }).attempts,
    ).toEqual([]);
  });
});

/** Names drawn mostly from a few, so that an attempt often matches the row's columns, and sometimes any text. */
const name = fc.oneof(
  fc.constantFrom('gpt-4o-mini', 'openai', 'openai/gpt-4o-mini', ''),
  fc.string({ unit: 'binary' }),
);

const anyAttempt: fc.Arbitrary<AttemptRecord> = fc.record({
  model: name,
  deployment: name,
  provider: name,
  upstreamModel: name,
  outcome: fc.constantFrom('success', 'error', 'skipped'),
  status: fc.oneof(fc.constantFrom(200, 400, 429, 500, 502), fc.integer({ min: 100, max: 599 })),
  code: fc.option(fc.oneof(fc.constantFrom('rate_limit_exceeded', 'upstream_error'), fc.string({ unit: 'binary' }))),
  waitedMs: fc.oneof(fc.constant(0), fc.nat()),
  latencyMs: fc.nat(),
});

type RoutingColumns = Omit<AttemptColumns, 'attempts' | 'served_latency_ms'>;

/** Any attempts and any routing columns (the JSON is nearly always needed). */
const anyCase: fc.Arbitrary<[AttemptRecord[], RoutingColumns]> = fc.tuple(
  fc.array(anyAttempt, { maxLength: 4 }),
  fc.record({
    served_model: fc.option(name),
    deployment: fc.option(name),
    provider: fc.option(name),
    upstream_model: fc.option(name),
    attempt_count: fc.option(fc.nat({ max: 5 })),
  }),
);

/**
 * One successful attempt and the row toLogRow makes of it (the JSON can be left out), with at most one thing changed
 * on either side, each of which must bring the JSON back.
 */
const servedCase: fc.Arbitrary<[AttemptRecord[], RoutingColumns]> = fc
  .record({
    model: name,
    deployment: name,
    provider: name,
    upstreamModel: name,
    latencyMs: fc.nat(),
    change: fc.constantFrom('none', 'status', 'code', 'waitedMs', 'served_model', 'deployment', 'attempt_count'),
  })
  .map(({ change, ...names }) => {
    const served: AttemptRecord = { ...names, outcome: 'success', status: 200, code: null, waitedMs: 0 };
    const columns: RoutingColumns = {
      served_model: names.model,
      deployment: names.deployment,
      provider: names.provider,
      upstream_model: names.upstreamModel,
      attempt_count: 1,
    };
    if (change === 'status') served.status = 201;
    if (change === 'code') served.code = 'note';
    if (change === 'waitedMs') served.waitedMs = 5;
    if (change === 'served_model') columns.served_model = `${names.model}-fallback`;
    if (change === 'deployment') columns.deployment = null;
    if (change === 'attempt_count') columns.attempt_count = 2;
    return [[served], columns];
  });

describe('the attempts column, written and read back', () => {
  it('gives back every list of attempts, whether written as JSON or implied by the row', () => {
    let implied = 0;
    fc.assert(
      fc.property(fc.oneof(anyCase, servedCase), ([attempts, columns]) => {
        const row = { ...columns } as RequestLogInsert;
        writeAttemptColumns(row, attempts);
        if (attempts.length > 0 && row.attempts === null) implied++;
        const back = readAttempts({
          ...columns,
          attempts: row.attempts ?? null,
          served_latency_ms: row.served_latency_ms ?? null,
        });
        expect(back).toEqual(JSON.parse(JSON.stringify(attempts)));
      }),
      { numRuns: 2000 },
    );
    // The generator reaches the case the JSON is left out for, not only the JSON.
    expect(implied).toBeGreaterThan(0);
  });

  it('leaves the JSON out exactly when the row implies the single successful attempt', () => {
    const row = {
      served_model: 'gpt-4o-mini',
      deployment: 'openai/gpt-4o-mini',
      provider: 'openai',
      upstream_model: 'gpt-4o-mini',
      attempt_count: 1,
    } as RequestLogInsert;
    writeAttemptColumns(row, [attempt()]);
    expect(row).toMatchObject({ attempts: null, served_latency_ms: 412 });
    writeAttemptColumns(row, [attempt({ waitedMs: 1 })]);
    expect(row.attempts).toBe(JSON.stringify([attempt({ waitedMs: 1 })]));
    writeAttemptColumns(row, undefined);
    expect(row).toMatchObject({ attempts: null, served_latency_ms: null });
  });
});
