import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { beforeAll, describe, expect, it } from 'vitest';
import { createRequestLogBatchWriter } from '../src/request-log/batch-writer.js';
import { ensurePartitions } from '../src/request-log/retention.js';
import { RowBatch } from '../src/request-log/row-batch.js';
import type { RequestLogInsert } from '../src/request-log/row-layout.js';
import { type ApiClient, accountId, createTestUser, signIn } from './support/console.js';
import { useGatewayWithMock } from './support/gateway-fixture.js';

/**
 * Exports of the request log are streamed: 200,000 rows (~110 MB of CSV) downloaded by a slow reader
 * while the heap is sampled after full collections (the gateway runs in this process), then the file parsed and counted. Holding the
 * rows, or reading ahead of the reader, would take several times the bound.
 */

// A full collection before each sample, so the samples measure what is held, not garbage not yet collected.
setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

const setup = useGatewayWithMock({ config: { request_log: { retention: 0 } } });

let owner: ApiClient;
let account: string;
const rowCount = 200_000;
const start = Date.UTC(2026, 1, 1);

beforeAll(async () => {
  account = await accountId(setup.gateway, 'acme');
  await createTestUser(setup.gateway, { email: 'owner@export.test', account: 'acme', role: 'owner' });
  owner = await signIn(setup.gateway, 'owner@export.test');
  const database = setup.gateway.gateway.database;
  if (database.dialect === 'postgres') {
    for (let day = 0; day < 3; day++) await ensurePartitions(database.db, start + day * 86_400_000);
  }
  const write = createRequestLogBatchWriter(database);
  const userAgent = `exporter/1.0 ${'x'.repeat(300)}`;
  for (let first = 0; first < rowCount; first += 5000) {
    const rows: RequestLogInsert[] = [];
    for (let index = first; index < first + 5000; index++) {
      const failed = index % 7 === 0;
      rows.push({
        request_id: `req_export_${String(index).padStart(7, '0')}`,
        created_at: start + index * 500,
        account_id: account,
        key_id: setup.gateway.keyId,
        key_name: 'exporter',
        // Text a spreadsheet would run as a formula, and text that needs quoting in CSV.
        model: index % 1000 === 0 ? '=HYPERLINK("x")' : 'mock',
        endpoint: 'chat_completions',
        provider: 'mock',
        status: failed ? 502 : 200,
        outcome: failed ? 'error' : 'success',
        error_message: failed ? `upstream said "no", then, "again"\nline two ${'e'.repeat(150)}` : null,
        stream: 0,
        usage_estimated: 0,
        latency_ms: index % 3000,
        prompt_tokens: failed ? null : 100,
        completion_tokens: failed ? null : 20,
        total_tokens: failed ? null : 120,
        cost_usd: failed ? null : 0.00012,
        user_agent: userAgent,
      });
    }
    await write(RowBatch.of(rows));
  }
}, 300_000);

/** Where the run of characters from `start` that are not a quote, comma or line break ends. */
function ordinaryRunEnd(text: string, start: number): number {
  let end = start;
  for (; end < text.length; end++) {
    const code = text.charCodeAt(end);
    if (code === 0x22 || code === 0x2c || code === 0x0a || code === 0x0d) break;
  }
  return end;
}

/** A strict RFC 4180 reader, fed chunk by chunk: counts records and checks every one has `width` fields. */
function csvReader(width: number) {
  let field = '';
  let fields: string[] = [];
  let quoted = false;
  let afterQuote = false;
  let records = 0;
  const first: string[][] = [];
  const endRecord = () => {
    fields.push(field);
    if (fields.length !== width) throw new Error(`record ${records} has ${fields.length} fields`);
    if (first.length < 3) first.push(fields);
    records++;
    fields = [];
    field = '';
  };
  return {
    feed(text: string) {
      // Runs of ordinary characters are taken as one slice: a character at a time is most of the download's time.
      let at = 0;
      while (at < text.length) {
        if (quoted) {
          const close = text.indexOf('"', at);
          if (close === -1) {
            field += text.slice(at);
            return;
          }
          field += text.slice(at, close);
          quoted = false;
          afterQuote = true;
          at = close + 1;
          continue;
        }
        const character = text[at];
        at++;
        if (character === '"') {
          if (afterQuote) field += '"';
          quoted = true;
          afterQuote = false;
          continue;
        }
        afterQuote = false;
        if (character === ',') {
          fields.push(field);
          field = '';
        } else if (character === '\n') endRecord();
        else if (character !== '\r') {
          const end = ordinaryRunEnd(text, at);
          field += text.slice(at - 1, end);
          at = end;
        }
      }
    },
    finish() {
      if (quoted) throw new Error('the file ends inside a quoted field');
      if (field !== '' || fields.length > 0) endRecord();
      return { records, first };
    },
  };
}

async function download(
  path: string,
  onText: (text: string) => void,
): Promise<{ peakHeapGrowth: number; bytes: number }> {
  collectGarbage();
  const baseline = process.memoryUsage().heapUsed;
  const response = await fetch(`${setup.gateway.url}${path}`, {
    headers: { cookie: `switchboard_session=${owner.cookie}` },
  });
  expect(response.status).toBe(200);
  let peak = baseline;
  let bytes = 0;
  let sincePause = 0;
  let sinceSample = 0;
  const decoder = new TextDecoder();
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    bytes += chunk.length;
    onText(decoder.decode(chunk, { stream: true }));
    sinceSample += chunk.length;
    if (sinceSample > 10_000_000) {
      sinceSample = 0;
      collectGarbage();
      peak = Math.max(peak, process.memoryUsage().heapUsed);
    }
    sincePause += chunk.length;
    // A slow reader: the server must wait for it rather than read the log ahead into memory.
    if (sincePause > 1_000_000) {
      sincePause = 0;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }
  onText(decoder.decode());
  return { peakHeapGrowth: peak - baseline, bytes };
}

describe('request-log export', () => {
  it('streams 200,000 rows as CSV with bounded memory, and the file parses', async () => {
    const reader = csvReader(29);
    const { peakHeapGrowth, bytes } = await download(`/api/accounts/${account}/logs/export?format=csv`, (text) =>
      reader.feed(text),
    );
    const { records, first } = reader.finish();
    expect(bytes).toBeGreaterThan(100_000_000);
    expect(records).toBe(rowCount + 1);
    expect(first[0]?.slice(0, 3)).toEqual(['time', 'request_id', 'account_id']);
    // Newest first.
    expect(first[1]?.[1]).toBe(`req_export_${String(rowCount - 1).padStart(7, '0')}`);
    expect(peakHeapGrowth).toBeLessThan(32 * 1024 * 1024);
  }, 300_000);

  it('streams JSON Lines with the filters applied, and formulas are defused in CSV', async () => {
    let buffer = '';
    let lines = 0;
    const { peakHeapGrowth } = await download(
      `/api/accounts/${account}/logs/export?format=jsonl&status=server_error&minLatencyMs=2000`,
      (text) => {
        buffer += text;
        const parts = buffer.split('\n');
        buffer = parts.pop() ?? '';
        for (const line of parts) {
          const entry = JSON.parse(line) as { status: number; latencyMs: number; error: { message: string } };
          expect(entry.status).toBe(502);
          expect(entry.latencyMs).toBeGreaterThanOrEqual(2000);
          lines++;
        }
      },
    );
    expect(buffer).toBe('');
    let expected = 0;
    for (let index = 0; index < rowCount; index++) if (index % 7 === 0 && index % 3000 >= 2000) expected++;
    expect(lines).toBe(expected);
    expect(peakHeapGrowth).toBeLessThan(32 * 1024 * 1024);

    const formulas = await owner.request(
      'GET',
      `/api/accounts/${account}/logs/export?format=csv&model=%3DHYPERLINK(%22x%22)`,
    );
    expect(formulas.status).toBe(200);
    expect(formulas.headers.get('content-type')).toContain('text/csv');
    expect(formulas.headers.get('content-disposition')).toMatch(/attachment; filename="switchboard-log-acme-.*\.csv"/);
    const text = String(formulas.body);
    expect(text.split('\n').filter((line) => line.startsWith('"20')).length).toBe(rowCount / 1000);
    expect(text).toContain(`"'=HYPERLINK(""x"")"`);
  }, 300_000);

  it('refuses an unknown format with a clear error', async () => {
    const response = await owner.request('GET', `/api/accounts/${account}/logs/export?format=xlsx`);
    expect(response.status).toBe(400);
    expect(response.body.error.param).toBe('format');
  });
});
