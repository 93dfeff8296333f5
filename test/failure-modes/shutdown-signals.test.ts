import { describe, expect, it } from 'vitest';
import { useMockForServes } from '../support/serve-fixture.js';
import { openServedDatabase, type Served, startServe } from '../support/serve-process.js';
import { waitFor, waitUntilRefused } from '../support/wait.js';
import { type ChatResult, chat, holdModel, mockModels } from './support.js';

/**
 * docs/operations.md, "Shutdown and crashes": on SIGTERM or SIGINT the server stops accepting connections, lets
 * in-flight requests and streams finish, writes the request log, and exits 0; a second signal exits at once. The
 * requests are held at the upstream until the signal has been received, so every one of them was accepted before it.
 */

const serves = useMockForServes();

async function startNode(): Promise<{ node: Served; key: string }> {
  // A long flush interval keeps the rows in the queue until shutdown writes them.
  const node = await startServe({
    config: { request_log: { flush_interval: '60s', batch_size: 5000 }, ...mockModels(serves.mock) },
  });
  await node.cli('accounts', 'create', 'acme');
  const { key } = await node.cli<{ key: string }>('keys', 'create', '--account', 'acme', '--name', 'load');
  return { node, key };
}

const receivedSignal = (node: Served) => node.output.some((line) => line.includes('"msg":"received signal"'));

describe.each(['SIGTERM', 'SIGINT'] as const)('%s', (signal) => {
  it('under load: refuses new connections, completes every accepted request, logs each, exits 0', async () => {
    const { node, key } = await startNode();
    const model = 'held';
    const held = holdModel(serves.mock, model);
    // Some requests already done (their rows are queued), and 24 in flight: streams and JSON, held at the upstream.
    const done = await Promise.all(Array.from({ length: 10 }, () => chat(node, key)));
    const inFlight: Array<Promise<ChatResult>> = Array.from({ length: 24 }, (_, index) =>
      chat(node, key, { model, stream: index % 2 === 0 }),
    );
    await waitFor('24 requests to reach the upstream', () => held.arrived() === 24);

    node.process.kill(signal);
    await waitFor('the signal to be received', () => receivedSignal(node));
    await waitUntilRefused(node.url);
    held.release();
    const finished = await Promise.all(inFlight);
    expect(await node.exited).toBe(0);

    for (const [index, result] of finished.entries()) {
      expect(result.status).toBe(200);
      if (index % 2 === 0) {
        expect(result.body.endsWith('data: [DONE]\n\n')).toBe(true);
        expect(result.body).not.toContain('"error"');
      } else {
        expect(JSON.parse(result.body).choices[0].message.content).toBe('Echo: hi');
      }
    }
    const database = await openServedDatabase(node);
    try {
      const rows = await database.db.selectFrom('request_log').select(['request_id', 'status']).execute();
      const ids = [...done, ...finished].map((result) => result.id);
      expect(rows.map((row) => row.request_id).sort()).toEqual(ids.sort());
      expect(rows.every((row) => row.status === 200)).toBe(true);
    } finally {
      await database.close();
    }
  });

  it('a second signal exits at once, without waiting for the requests in flight', async () => {
    const { node, key } = await startNode();
    const model = 'held';
    const held = holdModel(serves.mock, model);
    const inFlight = Array.from({ length: 4 }, () => chat(node, key, { model, stream: true }).catch((error) => error));
    await waitFor('4 requests to reach the upstream', () => held.arrived() === 4);
    node.process.kill(signal);
    await waitFor('the signal to be received', () => receivedSignal(node));
    node.process.kill(signal);
    // Exits while every request is still held at the upstream (released only afterwards): it did not wait.
    expect(await node.exited).toBe(1);
    expect(held.arrived()).toBe(4);
    held.release();
    for (const result of await Promise.all(inFlight)) {
      // The clients see their connection cut, never a complete answer.
      if (result instanceof Error) continue;
      expect((result as ChatResult).body).not.toContain('data: [DONE]');
    }
    expect(node.output.join('\n')).toContain('second signal: exiting without waiting');
  });
});
