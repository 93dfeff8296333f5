import type { AttemptRecord } from '../routing/trace.js';
import type { RequestLogInsert, RequestLogRow } from './row-layout.js';

/**
 * The `attempts` and `served_latency_ms` columns, written and read back in one place. A request served by its first
 * attempt (nearly all of them) is written without the attempts JSON: that attempt is a success with status 200 after
 * no wait, by the row's own served model, deployment, provider and upstream model, with the latency kept in
 * served_latency_ms, and reading the row gives it back field for field. Any other list is written as JSON.
 */

/** The columns the attempts are read back from. */
export type AttemptColumns = Pick<
  RequestLogRow,
  'attempts' | 'attempt_count' | 'served_latency_ms' | 'served_model' | 'deployment' | 'provider' | 'upstream_model'
>;

/**
 * Sets the row's attempts and served_latency_ms from the attempts made. Its served_model, deployment, provider,
 * upstream_model and attempt_count must already be set: they decide whether the JSON can be left out.
 */
export function writeAttemptColumns(row: RequestLogInsert, attempts: readonly AttemptRecord[] | undefined): void {
  row.attempts = null;
  row.served_latency_ms = null;
  if (attempts === undefined || attempts.length === 0) return;
  const served = attempts.findLast((attempt) => attempt.outcome === 'success');
  if (served && Number.isFinite(served.latencyMs)) row.served_latency_ms = served.latencyMs;
  if (!(attempts.length === 1 && served && impliedByRow(served, row))) row.attempts = attemptsJson(attempts);
}

/** The attempts a row holds: its JSON, or the single attempt its columns imply (none for rows without routing). */
export function readAttempts(row: AttemptColumns): AttemptRecord[] {
  if (row.attempts !== null) return parseAttempts(row.attempts);
  const latencyMs = row.served_latency_ms;
  if (row.attempt_count !== 1 || latencyMs === null || latencyMs === undefined) return [];
  const { served_model: model, deployment, provider, upstream_model: upstreamModel } = row;
  if (model === null || deployment === null || provider === null || upstreamModel === null) return [];
  return [
    { model, deployment, provider, upstreamModel, outcome: 'success', status: 200, code: null, waitedMs: 0, latencyMs },
  ];
}

/** Whether the row's own columns say all the attempt says (readAttempts gives it back equal). */
function impliedByRow(attempt: AttemptRecord, row: RequestLogInsert): boolean {
  return (
    attempt.outcome === 'success' &&
    attempt.status === 200 &&
    attempt.code === null &&
    attempt.waitedMs === 0 &&
    Number.isFinite(attempt.latencyMs) &&
    attempt.model === row.served_model &&
    attempt.deployment === row.deployment &&
    attempt.provider === row.provider &&
    attempt.upstreamModel === row.upstream_model &&
    row.attempt_count === 1
  );
}

function parseAttempts(text: string): AttemptRecord[] {
  try {
    const value: unknown = JSON.parse(text);
    return Array.isArray(value) ? (value as AttemptRecord[]) : [];
  } catch {
    return [];
  }
}

/**
 * Names as JSON strings, for the names an attempt repeats on every request (its model, deployment, provider and
 * upstream model all come from the configuration). Bounded, so that it cannot grow with anything a client sends.
 */
const quotedNames = new Map<string, string>();
const maxQuotedNames = 1_000;

function quoted(name: string): string {
  let json = quotedNames.get(name);
  if (json === undefined) {
    json = JSON.stringify(name);
    if (quotedNames.size < maxQuotedNames) quotedNames.set(name, json);
  }
  return json;
}

/** A number as JSON.stringify writes it (NaN and the infinities are null). */
const jsonNumber = (value: number): string => (Number.isFinite(value) ? String(value) : 'null');

/**
 * The same text as JSON.stringify(attempts), written out field by field: JSON.stringify walks each object's
 * properties generically and quotes every string again (docs/performance.md#the-request-log-store). A unit test
 * compares the two.
 */
export function attemptsJson(attempts: readonly AttemptRecord[]): string {
  let json = '[';
  for (let index = 0; index < attempts.length; index++) {
    const attempt = attempts[index] as AttemptRecord;
    if (index > 0) json += ',';
    json +=
      `{"model":${quoted(attempt.model)},"deployment":${quoted(attempt.deployment)},` +
      `"provider":${quoted(attempt.provider)},"upstreamModel":${quoted(attempt.upstreamModel)},` +
      `"outcome":${quoted(attempt.outcome)},"status":${jsonNumber(attempt.status)},` +
      `"code":${attempt.code === null ? 'null' : JSON.stringify(attempt.code)},` +
      `"waitedMs":${jsonNumber(attempt.waitedMs)},"latencyMs":${jsonNumber(attempt.latencyMs)}}`;
  }
  return `${json}]`;
}
