import type { ServerResponse } from 'node:http';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { chatBody, postChat, waitForLogRows } from './support/gateway.js';
import { useGatewayWithMock } from './support/gateway-fixture.js';
import { readSse } from './support/sse.js';
import { waitFor } from './support/wait.js';

/** Faults the gateway must survive without a crash, a hang, a 500, or a lost log row. */

let firehoseWritten = 0;
/** Whether the firehose waits for its connection to drain (the gateway stopped taking its bytes). */
let firehoseHeldBack = false;

const chunk = (content: string, finish: string | null = null) =>
  `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: finish ? {} : { content }, finish_reason: finish }] })}\n\n`;

async function writeWithBackpressure(response: ServerResponse, text: string): Promise<void> {
  if (response.write(text)) return;
  firehoseHeldBack = true;
  await new Promise((resolve) => response.once('drain', resolve));
  firehoseHeldBack = false;
}

const setup = useGatewayWithMock({
  upstreamHandlers: {
    // Two chunks, then silence: the gateway's idle timeout (1 s in tests) must end the stream in-band.
    'midstream-stall': (_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write(chunk('Hello'));
      response.write(chunk(' there'));
    },
    // A stream that turns into garbage.
    'garbage-sse': async (_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write(chunk('Hello'));
      await new Promise((resolve) => setTimeout(resolve, 30));
      response.end('data: {this is not json\n\n');
    },
    // 40 MB of content as fast as the connection takes it, honouring backpressure.
    firehose: async (_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      const piece = chunk('x'.repeat(16 * 1024));
      firehoseWritten = 0;
      for (let index = 0; index < 2560 && !response.destroyed; index++) {
        await writeWithBackpressure(response, piece);
        firehoseWritten += piece.length;
      }
      response.write(chunk('', 'stop'));
      response.end('data: [DONE]\n\n');
    },
  },
  models: ['midstream-stall', 'garbage-sse', 'firehose'].map((name) => ({
    name,
    provider: 'mock',
    upstream_model: name,
  })),
});

describe('upstream faults', () => {
  it('an upstream that stalls mid-stream: idle timeout, in-band error, [DONE], logged as 504', async () => {
    const response = await postChat(setup.gateway, chatBody('midstream-stall', { stream: true }));
    const events = await readSse(response);
    expect(events.at(-1)).toBe('[DONE]');
    expect(JSON.parse(events.at(-2) as string).error.code).toBe('upstream_timeout');
    const [row] = await waitForLogRows(setup.gateway, [response.headers.get('x-request-id') as string]);
    expect(row).toMatchObject({ outcome: 'error', status: 504, error_code: 'upstream_timeout' });
  });

  it('garbage in the middle of a stream: in-band error, never passed on', async () => {
    const response = await postChat(setup.gateway, chatBody('garbage-sse', { stream: true }));
    const events = await readSse(response);
    expect(events.at(-1)).toBe('[DONE]');
    expect(JSON.parse(events.at(-2) as string).error.code).toBe('upstream_malformed_response');
    expect(events.join('')).not.toContain('this is not json');
  });
});

describe('slow clients', () => {
  it('a client that stops reading slows the upstream down (backpressure) instead of filling memory', async () => {
    const response = await postChat(setup.gateway, chatBody('firehose', { stream: true }));
    const reader = response.body?.getReader();
    if (!reader) throw new Error('no body');
    await reader.read();
    // The client stops reading: the upstream must come to a standstill, held back, not drained into the gateway (a
    // gateway that buffered would take all 40 MB and the upstream would finish instead).
    let writtenAtLastProbe = -1;
    const writtenWhilePaused = await waitFor(
      'the upstream to be held back by the paused client',
      () => {
        const standstill = firehoseHeldBack && firehoseWritten === writtenAtLastProbe;
        writtenAtLastProbe = firehoseWritten;
        return standstill && { bytes: firehoseWritten };
      },
      { intervalMs: 100 },
    );
    expect(writtenWhilePaused.bytes).toBeLessThan(16 * 1024 * 1024);
    let received = 0;
    let tail = '';
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      received += value.length;
      tail = (tail + new TextDecoder().decode(value)).slice(-100);
    }
    expect(firehoseWritten).toBeGreaterThan(40 * 1024 * 1024);
    expect(received).toBeGreaterThan(40 * 1024 * 1024);
    expect(tail.endsWith('data: [DONE]\n\n')).toBe(true);
  });
});

describe('database briefly unavailable', () => {
  it('keeps serving, retries the log writes, and loses no row', async () => {
    const db = setup.gateway.gateway.database.db;
    // Warm the key cache so authentication does not need the database during the outage.
    expect((await postChat(setup.gateway, chatBody('mock'))).status).toBe(200);
    await sql`alter table request_log rename to request_log_away`.execute(db);
    const ids: string[] = [];
    try {
      for (let index = 0; index < 30; index++) {
        const response = await postChat(setup.gateway, chatBody('mock', { stream: index % 2 === 0 }));
        expect(response.status).toBe(200);
        await response.text();
        ids.push(response.headers.get('x-request-id') as string);
      }
      await waitFor('the failed log write to be logged', () =>
        setup.gateway.logLines.some((line) => line.includes('request-log write failed')),
      );
    } finally {
      await sql`alter table request_log_away rename to request_log`.execute(db);
    }
    const rows = await waitForLogRows(setup.gateway, ids, 10_000);
    expect(rows).toHaveLength(30);
  });
});
