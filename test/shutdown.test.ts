import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { storedResponseObject } from '../src/api/v1/responses/stored-response.js';
import { findResponse } from '../src/db/repositories/responses.js';
import { useMockForServes } from './support/serve-fixture.js';
import {
  createAccountWithKeys,
  openServedDatabase,
  prepareServe,
  type Served,
  startServe,
} from './support/serve-process.js';
import { parseStrictSse } from './support/sse.js';
import { waitFor } from './support/wait.js';

/**
 * SIGTERM against the real `switchboard serve` process: in-flight streams finish, queued log rows are written,
 * nothing accepted is lost; past the deadline, streams end with an in-band error and are still logged.
 */

const serves = useMockForServes();

interface Server extends Served {
  key: string;
}

async function startServer(config: Record<string, unknown> = {}): Promise<Server> {
  const files = await prepareServe({
    config: {
      ...config,
      providers: [{ name: 'mock', type: 'openai', base_url: serves.mock.baseUrl }],
      models: [
        { name: 'slow', provider: 'mock', upstream_model: 'slow-stream' },
        { name: 'fast', provider: 'mock', upstream_model: 'mock' },
      ],
    },
  });
  const [created] = await createAccountWithKeys(files, 'acme', ['shutdown']);
  return { ...(await startServe({ reuse: files })), key: created.key };
}

function stream(server: Server, model: string) {
  return openStream(server, model).then((opened) => opened.finished);
}

/**
 * Resolves once the server has answered with its headers (the request is in flight there, so a SIGTERM sent now
 * is one it must drain: sent earlier, on a loaded machine, the request might not have reached it yet).
 */
function openStream(server: Server, model: string) {
  return fetch(`${server.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${server.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, stream: true, messages: [{ role: 'user', content: 'hi' }] }),
  }).then((response) => ({
    finished: response.text().then((text) => ({
      status: response.status,
      id: response.headers.get('x-request-id') as string,
      text,
    })),
  }));
}

/** A stored `/v1/responses` stream, opened and read up to its response's id: the id, and the whole text once it ends. */
async function openResponseStream(server: Server, model: string) {
  const response = await fetch(`${server.url}/v1/responses`, {
    method: 'POST',
    headers: { authorization: `Bearer ${server.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, stream: true, input: 'hi' }),
  });
  const reader = response.body?.getReader();
  if (!reader) throw new Error('no body');
  const decoder = new TextDecoder();
  let text = '';
  let id: string | undefined;
  while (id === undefined) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`the stream ended before its id: ${text}`);
    text += decoder.decode(value, { stream: true });
    id = /"id":"(resp_[0-9a-f]+)"/.exec(text)?.[1];
  }
  const finished = (async () => {
    for (;;) {
      const { value, done } = await reader.read().catch(() => ({ done: true, value: undefined }));
      if (done) return text;
      text += decoder.decode(value, { stream: true });
    }
  })();
  return { id, finished };
}

/** How the stored response of this id reads in the served database now (undefined: not found). */
async function storedResponse(server: Pick<Served, 'dataDir' | 'databaseUrl'>, id: string) {
  const database = await openServedDatabase(server);
  try {
    const account = await database.db
      .selectFrom('accounts')
      .select('id')
      .where('name', '=', 'acme')
      .executeTakeFirstOrThrow();
    return await findResponse(database.db, account.id, id, Date.now());
  } finally {
    await database.close();
  }
}

async function logRows(server: Pick<Served, 'dataDir' | 'databaseUrl'>) {
  const database = await openServedDatabase(server);
  try {
    return await database.db
      .selectFrom('request_log')
      .select(['request_id', 'outcome', 'status', 'error_code'])
      .execute();
  } finally {
    await database.close();
  }
}

describe('graceful shutdown (SIGTERM)', () => {
  it('lets in-flight streams finish and writes every queued log row before exiting', async () => {
    // A long flush interval and a big batch keep rows in the queue until shutdown flushes them.
    const server = await startServer({ request_log: { flush_interval: '60s', batch_size: 5000 } });
    const quick = await Promise.all(Array.from({ length: 20 }, () => stream(server, 'fast')));
    const opened = await Promise.all(Array.from({ length: 4 }, () => openStream(server, 'slow')));
    server.process.kill('SIGTERM');
    const finished = await Promise.all(opened.map((slow) => slow.finished));
    expect(await server.exited).toBe(0);
    for (const result of finished) {
      expect(result.status).toBe(200);
      expect(parseStrictSse(result.text).frames.at(-1)?.data).toBe('[DONE]');
      expect(result.text).not.toContain('"error"');
      expect(result.text).toContain('w49');
    }
    const rows = await logRows(server);
    const ids = new Set(rows.map((row) => row.request_id));
    for (const result of [...quick, ...finished]) expect(ids.has(result.id)).toBe(true);
    expect(rows.every((row) => row.outcome === 'success')).toBe(true);
    // On SQLite the rows went through the bundled worker thread: had it failed to start, the server says so.
    expect(server.output.join('\n')).not.toContain('SQLite worker');
  });

  it('past the deadline, cuts streams with an in-band error and still logs them', async () => {
    const server = await startServer({ server: { shutdown_timeout: '700ms' } });
    const opened = await Promise.all(Array.from({ length: 3 }, () => openStream(server, 'slow')));
    server.process.kill('SIGTERM');
    const finished = await Promise.all(opened.map((slow) => slow.finished));
    expect(await server.exited).toBe(0);
    for (const result of finished) {
      expect(result.text).toContain('server_shutting_down');
      expect(parseStrictSse(result.text).frames.at(-1)?.data).toBe('[DONE]');
    }
    const rows = await logRows(server);
    for (const result of finished) {
      const row = rows.find((candidate) => candidate.request_id === result.id);
      expect(row).toMatchObject({ outcome: 'error', error_code: 'server_shutting_down' });
    }
  });
});

describe('stored responses at shutdown', () => {
  it('leaves no stored stream in progress when SIGTERM cuts it: it reads as failed on any node', async () => {
    const server = await startServer({ server: { shutdown_timeout: '700ms' } });
    const opened = await Promise.all(Array.from({ length: 3 }, () => openResponseStream(server, 'slow')));
    server.process.kill('SIGTERM');
    for (const stream of opened) expect(await stream.finished).toContain('event: response.failed');
    expect(await server.exited).toBe(0);
    for (const stream of opened) {
      const stored = await storedResponse(server, stream.id);
      expect(stored?.inProgress).toBeUndefined();
      if (!stored || stored.unstored) throw new Error(`${stream.id} was not stored`);
      // Stored as it failed, with the output it had; or, cut after the store closed, its row says its node stopped.
      if (!stored.stopped) expect(storedResponseObject(stored)).toMatchObject({ status: 'failed' });
    }
  });

  it('lets another process read a stream whose node was killed as failed once its lease has run out', async () => {
    const server = await startServer({
      request_log: { flush_interval: '100ms' },
      responses: { stream_lease: '1s' },
    });
    const stream = await openResponseStream(server, 'slow');
    await waitFor(
      'its row in progress to be written',
      async () => (await storedResponse(server, stream.id))?.inProgress,
    );
    await server.kill();
    await server.exited;
    await stream.finished;
    const restarted = await startServe({ reuse: server });
    try {
      const get = () =>
        fetch(`${restarted.url}/v1/responses/${stream.id}`, { headers: { authorization: `Bearer ${server.key}` } });
      await waitFor('the response to read as failed', async () => (await (await get()).json()).status === 'failed');
      const response = await (await get()).json();
      expect(response).toMatchObject({ id: stream.id, status: 'failed', error: { code: 'server_error' } });
      const continued = await fetch(`${restarted.url}/v1/responses`, {
        method: 'POST',
        headers: { authorization: `Bearer ${server.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'fast', previous_response_id: stream.id, input: 'go on' }),
      });
      expect(continued.status).toBe(404);
      expect(((await continued.json()) as { error: { code: string } }).error.code).toBe('previous_response_not_found');
    } finally {
      expect(await restarted.stop()).toBe(0);
    }
  });
});

describe('SIGKILL', () => {
  it('leaves a database that opens cleanly, with every row flushed before the kill', async () => {
    const server = await startServer({ request_log: { flush_interval: '100ms' } });
    const early = await Promise.all(Array.from({ length: 10 }, () => stream(server, 'fast')));
    // Flushed (every 100 ms): these rows are on disk before the kill.
    await waitFor('the early rows to be written', async () => {
      const ids = new Set((await logRows(server)).map((row) => row.request_id));
      return early.every((result) => ids.has(result.id));
    });
    // Load in flight at the moment of the kill: the slow streams have reached the upstream.
    const slowBefore = serves.mock.requests.filter((request) => request.body.model === 'slow-stream').length;
    const inFlight = Array.from({ length: 6 }, () => stream(server, 'slow').catch(() => undefined));
    const quick = Array.from({ length: 20 }, () => stream(server, 'fast').catch(() => undefined));
    await waitFor(
      'the slow streams to reach the upstream',
      () => serves.mock.requests.filter((request) => request.body.model === 'slow-stream').length >= slowBefore + 6,
    );
    await server.kill();
    await server.exited;
    await Promise.all([...inFlight, ...quick]);

    if (!server.databaseUrl) {
      const { default: Sqlite } = await import('better-sqlite3');
      const file = new Sqlite(path.join(server.dataDir, 'switchboard.db'));
      expect(file.pragma('integrity_check', { simple: true })).toBe('ok');
      file.close();
    }
    const restarted = await startServe({ reuse: server });
    try {
      const after = await stream({ ...server, url: restarted.url }, 'fast');
      expect(after.status).toBe(200);
      const ids = new Set((await logRows(server)).map((row) => row.request_id));
      for (const result of early) expect(ids.has(result.id)).toBe(true);
    } finally {
      expect(await restarted.stop()).toBe(0);
    }
  });
});
