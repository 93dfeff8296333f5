import { mkdtempSync, rmSync } from 'node:fs';
import { type ClientRequest, request as httpRequest, type IncomingMessage } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../src/accounts/service.js';
import { type GatedUpstream, type GatePlan, startGatedUpstream } from './support/gated-upstream.js';
import { useGatewayWithMock } from './support/gateway-fixture.js';
import { type MockAnthropicUpstream, startMockAnthropicUpstream } from './support/mock-anthropic-upstream.js';
import { type MockGeminiUpstream, startMockGeminiUpstream } from './support/mock-gemini-upstream.js';
import { startTimerCensus } from './support/timer-census.js';
import { writeTinyGguf } from './support/tiny-gguf.js';
import { waitFor } from './support/wait.js';

/**
 * Generated client disconnects: every endpoint, through every provider type it reaches (the OpenAI, Anthropic and
 * Gemini mocks behind a gate that holds their answers where the case says, and the built-in local provider on a tiny
 * random-weight model), the client leaving at any moment (while still sending its body, before the answer's headers,
 * after them, after N events, after the last byte, while a failed attempt waits for its retry, while waiting in the
 * local model's queue) in any way (socket destroyed, fetch aborted, write side half-closed). After each case: the gateway is alive and logged no unexpected error, the upstream request was aborted
 * when the client left early (and not otherwise), the request has exactly one log row with the right outcome (499
 * `cancelled`, or the success when the client left after the end), nothing is in flight or streaming upstream any
 * more, and a local model's slot is free and serves the next request. `FUZZ_RUNS=1000` hunts longer.
 */

type ProviderKind = 'openai' | 'anthropic' | 'gemini' | 'local';
type EndpointName = 'chat' | 'responses' | 'messages' | 'count_tokens' | 'completions' | 'embeddings';
type Moment =
  | { kind: 'during-body'; fraction: number }
  /** Upstream held before its headers, or after some of its answer (`pieces`); the client leaves before its headers. */
  | { kind: 'before-headers'; pieces: number | undefined }
  | { kind: 'after-headers'; pieces: number }
  | { kind: 'after-events'; events: number; pieces: number }
  | { kind: 'after-last-byte' }
  /** The upstream failed first; the client leaves while the gateway waits to retry. */
  | { kind: 'during-backoff' }
  /** The upstream answered whole; the client leaves after N events (or the headers), racing the gateway's end. */
  | { kind: 'racing-the-end'; events: number }
  /** The local model's one slot is taken; the client leaves while its request waits in the queue. */
  | { kind: 'while-queued' }
  /** Two requests pipelined on one connection, both being served (the second's answer queued behind the first's). */
  | { kind: 'pipelined' };
type Leave = 'destroy' | 'abort' | 'half-close';

interface Case {
  endpoint: EndpointName;
  provider: ProviderKind;
  stream: boolean;
  moment: Moment;
  leave: Leave;
  /** Texts to embed (Gemini's batches hold 100, four sent at a time); other requests have one text. */
  inputs: number;
}

const endpoints: Record<EndpointName, { path: string; logName: string; providers: ProviderKind[]; streams: boolean }> =
  {
    chat: {
      path: '/v1/chat/completions',
      logName: 'chat_completions',
      providers: ['openai', 'anthropic', 'gemini', 'local'],
      streams: true,
    },
    responses: {
      path: '/v1/responses',
      logName: 'responses',
      providers: ['openai', 'anthropic', 'gemini', 'local'],
      streams: true,
    },
    messages: {
      path: '/v1/messages',
      logName: 'messages',
      providers: ['openai', 'anthropic', 'gemini', 'local'],
      streams: true,
    },
    count_tokens: {
      path: '/v1/messages/count_tokens',
      logName: 'count_tokens',
      providers: ['anthropic', 'openai', 'local'],
      streams: false,
    },
    completions: { path: '/v1/completions', logName: 'completions', providers: ['openai', 'local'], streams: true },
    embeddings: {
      path: '/v1/embeddings',
      logName: 'embeddings',
      providers: ['openai', 'gemini', 'local'],
      streams: false,
    },
  };

const chatModels: Record<ProviderKind, string> = {
  openai: 'via-openai',
  anthropic: 'via-claude',
  gemini: 'via-gemini',
  local: 'tiny-chat',
};
const embeddingModels: Record<ProviderKind, string> = {
  openai: 'via-openai',
  anthropic: 'via-claude',
  gemini: 'via-gemini',
  local: 'tiny-embed',
};

let directory: string;
let anthropicMock: MockAnthropicUpstream;
let geminiMock: MockGeminiUpstream;
let openaiTarget = '';
const gates = {} as Record<Exclude<ProviderKind, 'local'>, GatedUpstream>;

// Registered before the fixture, so they run after the gateway closed (afterAll hooks run in reverse).
afterAll(async () => {
  await Promise.all(Object.values(gates).map((gate) => gate.close()));
  await anthropicMock?.close();
  await geminiMock?.close();
  rmSync(directory, { recursive: true, force: true });
});

beforeAll(async () => {
  anthropicMock = await startMockAnthropicUpstream();
  geminiMock = await startMockGeminiUpstream();
  gates.openai = await startGatedUpstream(() => openaiTarget);
  gates.anthropic = await startGatedUpstream(() => anthropicMock.url);
  gates.gemini = await startGatedUpstream(() => geminiMock.url);
});

// The gate holds answers until the client leaves: only a stuck test reaches these timeouts.
const patient = { connect: '60s', first_byte: '60s', idle: '60s' };
// One retry, after a backoff only a stuck test waits out: a request whose client left must not wait for it.
const slowRetry = { attempts: 1, initial_backoff: '10m', max_backoff: '10m' };
// Long enough that a generation cannot have finished when its client leaves (the tiny model never ends on its own),
// and that one left running would outlast every wait of the checks: a slot free in time was freed by the leaving.
const longGeneration = 60_000;

const setup = useGatewayWithMock((mock) => {
  openaiTarget = mock.url;
  directory = mkdtempSync(path.join(tmpdir(), 'switchboard-disconnects-'));
  const chatFile = path.join(directory, 'tiny.gguf');
  const embeddingFile = path.join(directory, 'tiny-embed.gguf');
  writeTinyGguf(chatFile, { contextLength: 65_536 });
  writeTinyGguf(embeddingFile, { pooling: 'mean' });
  return {
    // Keepalive comments commit a held stream's 200 quickly, and tell a reader the gateway has sent all it has.
    config: { server: { stream_keepalive: '100ms' } },
    providers: [
      {
        name: 'gated-openai',
        type: 'openai',
        base_url: `${gates.openai.url}/v1`,
        api_key: 'sk-gated',
        timeouts: patient,
      },
      {
        name: 'gated-claude',
        type: 'anthropic',
        base_url: `${gates.anthropic.url}/v1`,
        api_key: 'sk-ant-gated',
        timeouts: patient,
      },
      {
        name: 'gated-gemini',
        type: 'gemini',
        base_url: `${gates.gemini.url}/v1beta`,
        api_key: 'gemini-gated',
        timeouts: patient,
      },
      { name: 'tiny', type: 'local', model_path: chatFile, context_size: 65_536, max_concurrent: 1, threads: 1 },
      {
        name: 'tiny-embedder',
        type: 'local',
        model_path: embeddingFile,
        context_size: 64,
        max_concurrent: 1,
        threads: 1,
      },
    ],
    models: [
      {
        name: 'via-openai',
        provider: 'gated-openai',
        upstream_model: 'mock',
        capabilities: ['chat', 'embeddings'],
        retry: slowRetry,
      },
      { name: 'via-claude', provider: 'gated-claude', upstream_model: 'mock', retry: slowRetry },
      {
        name: 'via-gemini',
        provider: 'gated-gemini',
        upstream_model: 'mock',
        capabilities: ['chat', 'embeddings'],
        retry: slowRetry,
      },
      { name: 'tiny-chat', provider: 'tiny' },
      { name: 'tiny-embed', provider: 'tiny-embedder', capabilities: ['embeddings'] },
    ],
  };
});

let markers = 0;
/** What the cases came to (moment, provider, status of the row), printed at the end: what a run really exercised. */
const tally = new Map<string, number>();
afterAll(() => console.log(JSON.stringify(Object.fromEntries([...tally].sort()))));

/** Whether the case's request reaches an upstream (through a gate); count_tokens only does for Anthropic's models. */
function reachesUpstream(provider: ProviderKind, endpoint: EndpointName): boolean {
  return provider !== 'local' && (endpoint !== 'count_tokens' || provider === 'anthropic');
}

/** The upstream calls a request makes: Gemini embeds 100 texts per call. */
function upstreamCalls(testCase: Case): number {
  return testCase.endpoint === 'embeddings' && testCase.provider === 'gemini' ? Math.ceil(testCase.inputs / 100) : 1;
}

/** Gemini's batch calls of one request go four at a time. */
const parallelBatches = 4;

function requestBody(testCase: Case, marker: string): Record<string, unknown> {
  const { endpoint, provider, stream, moment } = testCase;
  const text = `Say ${marker}`;
  // A local generation the client leaves must still be running when it leaves; one it reads whole is short.
  const maxTokens = provider === 'local' && moment.kind !== 'after-last-byte' ? longGeneration : 8;
  const streamField = stream ? { stream: true } : {};
  switch (endpoint) {
    case 'chat':
      return {
        model: chatModels[provider],
        messages: [{ role: 'user', content: text }],
        max_tokens: maxTokens,
        ...streamField,
      };
    case 'responses':
      return { model: chatModels[provider], input: text, max_output_tokens: maxTokens, ...streamField };
    case 'messages':
      return {
        model: chatModels[provider],
        max_tokens: maxTokens,
        messages: [{ role: 'user', content: text }],
        ...streamField,
      };
    case 'completions':
      return { model: chatModels[provider], prompt: text, max_tokens: maxTokens, ...streamField };
    case 'count_tokens':
      return { model: chatModels[provider], messages: [{ role: 'user', content: text }] };
    case 'embeddings':
      return {
        model: embeddingModels[provider],
        input: Array.from({ length: testCase.inputs }, (_, index) => `${text} ${index}`),
      };
  }
}

function headersFor(key: string): Record<string, string> {
  return {
    authorization: `Bearer ${key}`,
    'anthropic-version': '2023-06-01',
    'content-type': 'application/json',
  };
}

async function scrape(): Promise<string> {
  return (await fetch(`${setup.gateway.url}/metrics`)).text();
}

function gauge(metrics: string, name: string): number {
  const line = metrics.split('\n').find((candidate) => candidate.startsWith(`${name} `));
  return line === undefined ? Number.NaN : Number(line.slice(name.length + 1));
}

const inFlight = async () => gauge(await scrape(), 'switchboard_in_flight_requests');

/** How the client holds its request: node:http for destroy and half-close, fetch with an AbortController for abort. */
interface ClientSide {
  /** Sends the body (or `part` of it) and returns once the bytes were handed to the kernel. */
  readonly headers: Promise<void>;
  /** Resolves when the response headers arrived. */
  readonly responded: Promise<void>;
  /** Resolves with the text received so far once `until` says so, or the body is complete. */
  read(until: (text: string) => boolean): Promise<{ text: string; whole: boolean }>;
  leave(): void;
  /** Lets go of whatever is left (after the checks). */
  dispose(): void;
}

function viaNodeHttp(
  url: string,
  headers: Record<string, string>,
  body: Buffer,
  cut: number | undefined,
  leave: 'destroy' | 'half-close',
): ClientSide {
  const target = new URL(url);
  const request: ClientRequest = httpRequest({
    host: target.hostname,
    port: Number(target.port),
    path: target.pathname,
    method: 'POST',
    headers: { ...headers, 'content-length': String(body.length) },
    agent: false,
  });
  request.on('error', () => undefined);
  let text = '';
  let whole = false;
  const waiters: Array<() => void> = [];
  const notify = () => {
    for (const waiter of waiters.splice(0)) waiter();
  };
  const responded = new Promise<void>((resolve) => {
    request.on('response', (response: IncomingMessage) => {
      response.on('error', () => undefined);
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        text += chunk;
        notify();
      });
      response.on('end', () => {
        whole = true;
        notify();
      });
      response.on('close', notify);
      resolve();
    });
  });
  const sent = new Promise<void>((resolve) => {
    if (cut === undefined) request.end(body, () => resolve());
    else if (cut === 0) {
      request.flushHeaders();
      request.once('socket', (socket) => {
        if (socket.connecting) socket.once('connect', () => setImmediate(resolve));
        else setImmediate(resolve);
      });
    } else request.write(body.subarray(0, cut), () => resolve());
  });
  return {
    headers: sent,
    responded,
    async read(until) {
      await responded;
      for (;;) {
        if (whole || until(text) || request.destroyed) return { text, whole };
        await new Promise<void>((resolve) => waiters.push(resolve));
      }
    },
    leave() {
      if (leave === 'destroy') request.destroy();
      else request.socket?.end();
    },
    dispose() {
      request.destroy();
    },
  };
}

function viaFetch(url: string, headers: Record<string, string>, body: Buffer, cut: number | undefined): ClientSide {
  const controller = new AbortController();
  let firstPartTaken: () => void = () => undefined;
  const taken = new Promise<void>((resolve) => {
    firstPartTaken = resolve;
  });
  // A body that never finishes: its first part, then nothing (sent chunked). fetch sends nothing, headers included,
  // before a stream body's first bytes, so the part is at least one byte.
  const partial =
    cut === undefined
      ? undefined
      : new ReadableStream<Uint8Array>({
          start(stream) {
            stream.enqueue(body.subarray(0, Math.max(1, cut)));
          },
          pull() {
            firstPartTaken();
            return new Promise(() => undefined);
          },
        });
  const response = fetch(url, {
    method: 'POST',
    headers,
    body: partial ?? body,
    signal: controller.signal,
    ...(partial ? { duplex: 'half' } : {}),
  } as RequestInit);
  response.catch(() => undefined);
  let text = '';
  let whole = false;
  const decoder = new TextDecoder();
  const responded = response.then(
    () => undefined,
    () => undefined,
  );
  return {
    headers: partial ? taken : Promise.resolve(),
    responded,
    async read(until) {
      const answer = await response.catch(() => undefined);
      const reader = answer?.body?.getReader();
      if (!reader) return { text, whole };
      try {
        while (!until(text)) {
          const { done, value } = await reader.read();
          if (done) {
            whole = true;
            break;
          }
          text += decoder.decode(value, { stream: true });
        }
      } catch {
        // aborted
      } finally {
        reader.releaseLock();
      }
      return { text, whole };
    },
    leave() {
      controller.abort();
    },
    dispose() {
      controller.abort();
    },
  };
}

/**
 * Two requests written back to back on one connection (HTTP/1.1 pipelining): the server serves both at once, the
 * second's answer waiting for the first's. Leaving by abort is a destroy here (no fetch).
 */
function viaPipelinedSocket(url: string, headers: Record<string, string>, body: Buffer, leave: Leave): ClientSide {
  const target = new URL(url);
  const socket = connect({ host: target.hostname, port: Number(target.port) });
  socket.on('error', () => undefined);
  socket.resume();
  const head = Object.entries({ ...headers, host: target.host, 'content-length': String(body.length) })
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  const one = Buffer.concat([Buffer.from(`POST ${target.pathname} HTTP/1.1\r\n${head}\r\n`), body]);
  const sent = new Promise<void>((resolve) => {
    socket.write(Buffer.concat([one, one]), () => resolve());
  });
  return {
    headers: sent,
    responded: sent,
    read: async () => ({ text: '', whole: false }),
    leave() {
      if (leave === 'half-close') socket.end();
      else socket.destroy();
    },
    dispose() {
      socket.destroy();
    },
  };
}

const events = (text: string) => text.split('\n\n').length - 1;

/** What the local model's slots look like: busy count per provider. */
async function slotsBusy(provider: string): Promise<number> {
  return gauge(await scrape(), `switchboard_provider_slots_busy{provider="${provider}"}`);
}

interface RunOptions {
  /** Other requests may be in flight (the tenant test): in-flight counts are checked at the end instead. */
  shared: boolean;
}

/** The case run last: work it left running fails every case after it, so the failure names it. */
let previousCase = 'none';

async function runCase(testCase: Case, options: RunOptions): Promise<void> {
  const { endpoint, provider, stream, moment, leave } = testCase;
  const marker = `case-${++markers}-${Math.random().toString(36).slice(2, 8)}`;
  const context = JSON.stringify(testCase);
  if (!options.shared) {
    await waitFor(`the case before (${previousCase}) to have left nothing running`, async () => {
      const metrics = await scrape();
      return (
        gauge(metrics, 'switchboard_in_flight_requests') === 0 &&
        gauge(metrics, 'switchboard_provider_slots_busy{provider="tiny"}') === 0 &&
        Object.values(gates).every((gate) => gate.open === 0)
      );
    });
  }
  previousCase = context;
  const logLinesBefore = setup.gateway.logLines.length;
  // Requests the case makes (a pipelined case makes two, the same twice).
  const requests = moment.kind === 'pipelined' ? 2 : 1;
  // As many concurrent requests as the case makes: a lease not given back refuses the follow-up request.
  const { key, id: keyId } = await setup.gateway.newKey({ name: marker, limits: { concurrentRequests: requests } });
  const gate = reachesUpstream(provider, endpoint) ? gates[provider as Exclude<ProviderKind, 'local'>] : undefined;
  const calls = upstreamCalls(testCase);
  // A local embedding cannot be caught running: the client leaves right after its body, racing the answer.
  const raced =
    moment.kind === 'racing-the-end' || (moment.kind === 'before-headers' && !gate && endpoint === 'embeddings');
  const plan: GatePlan =
    moment.kind === 'pipelined'
      ? { holdHeaders: true }
      : moment.kind === 'before-headers'
        ? moment.pieces === undefined
          ? { holdHeaders: true }
          : { piecesBeforeHold: moment.pieces }
        : moment.kind === 'after-headers' || moment.kind === 'after-events'
          ? { piecesBeforeHold: moment.pieces }
          : moment.kind === 'during-backoff'
            ? { failFirst: true }
            : {};
  gate?.plan(marker, plan);

  const body = Buffer.from(JSON.stringify(requestBody(testCase, marker)));
  const cut = moment.kind === 'during-body' ? Math.floor(moment.fraction * body.length) : undefined;
  const url = `${setup.gateway.url}${endpoints[endpoint].path}`;
  const client =
    moment.kind === 'pipelined'
      ? viaPipelinedSocket(url, headersFor(key), body, leave)
      : leave === 'abort'
        ? viaFetch(url, headersFor(key), body, cut)
        : viaNodeHttp(url, headersFor(key), body, cut, leave);

  let receivedWhole = false;
  let blocker: AbortController | undefined;
  try {
    if (moment.kind === 'while-queued') blocker = await occupyLocalSlot();
    await client.headers;
    // fetch tells nothing of its bytes leaving: a client that leaves without waiting for anything of its own waits for
    // its request to be served first, or answered.
    if (raced && leave === 'abort' && !options.shared) {
      let answered = false;
      void client.responded.then(() => {
        answered = true;
      });
      await waitFor('the request to arrive', async () => answered || (await inFlight()) >= 1);
    }
    switch (moment.kind) {
      case 'during-body':
        // The request's headers reached the gateway (the request is being served) before the client leaves.
        if (!options.shared) await waitFor('the request to be in flight', async () => (await inFlight()) >= 1);
        break;
      case 'before-headers':
        if (gate) {
          await waitFor('the upstream to hold the answer', () => {
            const found = gate.exchangesFor(marker);
            return (
              found.length === Math.min(calls, parallelBatches) &&
              found.every((exchange) => exchange.totalPieces > 0 && (plan.holdHeaders || exchange.headersSent))
            );
          });
        } else if (endpoint !== 'embeddings') {
          await waitFor('the generation to run', async () => (await slotsBusy('tiny')) >= 1);
        }
        break;
      case 'after-headers':
        await client.responded;
        break;
      case 'after-events': {
        const count = moment.events;
        // Up to N events, or everything the gateway had to send (a keepalive comment says it waits for the upstream).
        await client.read((text) => events(text) >= count || text.includes(': keepalive'));
        break;
      }
      case 'after-last-byte':
        receivedWhole = (await client.read(() => false)).whole;
        expect(receivedWhole, context).toBe(true);
        break;
      case 'during-backoff':
        await waitFor('the first attempt to have failed', () => gate?.exchangesFor(marker)[0]?.finished);
        break;
      case 'racing-the-end': {
        const count = moment.events;
        receivedWhole = (await client.read((text) => events(text) >= count)).whole;
        break;
      }
      case 'while-queued':
        await waitFor('the request to wait in the queue', async () => (await queueWaiting()) >= 1);
        break;
      case 'pipelined':
        if (gate) {
          await waitFor('both requests to be held upstream', () => {
            const found = gate.exchangesFor(marker);
            return found.length === 2 && found.every((exchange) => exchange.totalPieces > 0);
          });
        } else {
          // The first generates, the second waits for the slot.
          await waitFor('one request generating and one queued', async () => {
            const metrics = await scrape();
            return (
              gauge(metrics, 'switchboard_provider_slots_busy{provider="tiny"}') >= 1 &&
              gauge(metrics, 'switchboard_provider_queue_waiting{provider="tiny"}') >= 1
            );
          });
        }
        break;
    }
    client.leave();
    if (blocker) {
      // The request left the queue at once, while the slot is still taken.
      if (!options.shared) await waitFor('the queue to be empty', async () => (await queueWaiting()) === 0);
      blocker.abort();
    }

    // The gateway is alive, and stopped the work.
    expect((await fetch(`${setup.gateway.url}/healthz`)).status, context).toBe(200);
    if (gate) {
      if (moment.kind === 'during-body') {
        expect(gate.exchangesFor(marker), context).toEqual([]);
      } else {
        const found = await waitFor('the upstream requests to be over', () => {
          const found = gate.exchangesFor(marker);
          return found.length > 0 && found.every((item) => item.aborted || item.finished) && found;
        });
        const expected =
          moment.kind === 'pipelined'
            ? 2
            : moment.kind === 'before-headers'
              ? Math.min(calls, parallelBatches)
              : receivedWhole
                ? calls
                : 1;
        if (raced) expect(found.length, context).toBeLessThanOrEqual(calls);
        else expect(found.length, context).toBe(expected);
        for (const exchange of found) {
          if (receivedWhole || moment.kind === 'during-backoff') expect(exchange.finished, context).toBe(true);
          else if (!raced) expect(exchange.aborted, context).toBe(true);
        }
      }
    }
    if (!options.shared) {
      await waitFor('nothing in flight', async () => (await inFlight()) === 0);
      await waitFor('no upstream answer streaming', () => Object.values(gates).every((item) => item.open === 0));
    }
    if (provider === 'local') {
      const slotProvider = endpoint === 'embeddings' ? 'tiny-embedder' : 'tiny';
      await waitFor('the local slot to be free', async () => (await slotsBusy(slotProvider)) === 0);
    }

    // Exactly one row, with the outcome of when the client left.
    const db = setup.gateway.gateway.database.db;
    const rowsOf = () => db.selectFrom('request_log').selectAll().where('key_id', '=', keyId).execute();
    // With other requests in flight, a client that waited for nothing of its own may have left before it was served.
    const duringBodyShared =
      options.shared &&
      (moment.kind === 'during-body' || (leave === 'abort' && (moment.kind === 'while-queued' || raced)));
    if (!duringBodyShared) {
      // A minute, not the usual 15 s: with a bystander's traffic and the other engine's run, a loaded machine has
      // taken longer than that to write a batch on PostgreSQL (a passing run never waits for the deadline).
      await waitFor('the request-log rows', async () => (await rowsOf()).length >= requests, { timeoutMs: 60_000 });
    }
    const rows = await rowsOf();
    expect(rows.length, context).toBe(duringBodyShared ? Math.min(rows.length, 1) : requests);
    for (const row of rows) {
      const seen = `${moment.kind} ${provider} ${stream ? 'stream' : 'json'} ${row.status}`;
      tally.set(seen, (tally.get(seen) ?? 0) + 1);
      expect(row.endpoint, context).toBe(endpoints[endpoint].logName);
      expect(row.stream === 1, context).toBe(moment.kind === 'during-body' ? false : stream);
      if (receivedWhole) expect(row, context).toMatchObject({ status: 200, outcome: 'success' });
      else if (raced && row.status === 200) {
        // The gateway may have written the whole answer before the client left: a success, never anything else.
        expect(row, context).toMatchObject({ status: 200, outcome: 'success' });
      } else {
        expect(row, context).toMatchObject({ status: 499, outcome: 'cancelled' });
        // The client's leaving is nobody's failure: no attempt blamed on the upstream (its health, its breaker), but
        // the 503 the gate really answered before the backoff.
        const attempts: Array<{ status: number }> = JSON.parse(row.attempts ?? '[]');
        const blamed = attempts.filter((attempt) => attempt.status !== 499);
        expect(
          blamed.map((attempt) => attempt.status),
          context,
        ).toEqual(moment.kind === 'during-backoff' ? [503] : []);
        if (moment.kind !== 'during-body') expect(row.error_code, context).toBe('client_closed_request');
      }
    }

    // A following request of the same key is served: its concurrency lease came back, the local slot too.
    const followUp = { ...testCase, stream: false, inputs: 1, moment: { kind: 'after-last-byte' as const } };
    const sendFollowUp = () =>
      fetch(url, {
        method: 'POST',
        headers: headersFor(key),
        body: JSON.stringify(requestBody(followUp, 'follow-up')),
      });
    // Unless the case's own request may still be finishing (nothing of its own was waited for): then its lease comes
    // back when it does.
    const next = duringBodyShared
      ? await waitFor('the follow-up request to be admitted', async () => {
          const answer = await sendFollowUp();
          if (answer.status !== 429) return answer;
          await answer.arrayBuffer();
          return false;
        })
      : await sendFollowUp();
    expect(next.status, `${context} then ${await next.clone().text()}`).toBe(200);
    await next.arrayBuffer();
    const unexpected = setup.gateway.logLines.slice(logLinesBefore).filter((line) => line.includes('unexpected error'));
    expect(unexpected, context).toEqual([]);
  } finally {
    blocker?.abort();
    client.dispose();
  }
}

const queueWaiting = async () => gauge(await scrape(), 'switchboard_provider_queue_waiting{provider="tiny"}');

/** Takes the local model's one slot with a long stream (read until it generates); abort it to give the slot back. */
async function occupyLocalSlot(): Promise<AbortController> {
  const controller = new AbortController();
  const response = await fetch(`${setup.gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: headersFor(setup.gateway.key),
    body: JSON.stringify({
      model: 'tiny-chat',
      messages: [{ role: 'user', content: 'Take the slot' }],
      max_tokens: longGeneration,
      stream: true,
    }),
    signal: controller.signal,
  });
  expect(response.status).toBe(200);
  await response.body?.getReader().read();
  return controller;
}

const leaves = fc.constantFrom<Leave>('destroy', 'abort', 'half-close');

function momentsFor(provider: ProviderKind, endpoint: EndpointName, stream: boolean): fc.Arbitrary<Moment> {
  const upstream = reachesUpstream(provider, endpoint);
  const generates = provider === 'local' && endpoint !== 'embeddings' && endpoint !== 'count_tokens';
  const options: fc.Arbitrary<Moment>[] = [
    fc.record({ kind: fc.constant('during-body' as const), fraction: fc.double({ min: 0, max: 0.99, noNaN: true }) }),
    fc.constant({ kind: 'after-last-byte' as const }),
  ];
  // Upstream answers are a few to a few dozen pieces; the gate clamps to all but the last.
  const pieces = fc.nat({ max: 30 });
  if (upstream) {
    options.push(
      fc.record({
        kind: fc.constant('before-headers' as const),
        pieces: stream ? fc.constant(undefined) : fc.option(fc.constant(1), { nil: undefined }),
      }),
      fc.constant({ kind: 'during-backoff' as const }),
      fc.constant({ kind: 'pipelined' as const }),
      fc.record({ kind: fc.constant('racing-the-end' as const), events: fc.nat({ max: 40 }) }),
    );
  } else if (generates) {
    options.push(fc.constant({ kind: 'while-queued' as const }), fc.constant({ kind: 'pipelined' as const }));
    if (!stream) options.push(fc.constant({ kind: 'before-headers' as const, pieces: undefined }));
  } else if (provider === 'local' && endpoint === 'embeddings') {
    options.push(fc.constant({ kind: 'before-headers' as const, pieces: undefined }));
  }
  if (stream) {
    options.push(
      fc.record({ kind: fc.constant('after-headers' as const), pieces }),
      fc.record({ kind: fc.constant('after-events' as const), events: fc.integer({ min: 1, max: 40 }), pieces }),
    );
  }
  return fc.oneof(...options);
}

const manyInputs: ReadonlySet<Moment['kind']> = new Set(['before-headers', 'after-last-byte', 'during-body']);

const cases: fc.Arbitrary<Case> = fc
  .constantFrom<EndpointName>('chat', 'responses', 'messages', 'count_tokens', 'completions', 'embeddings')
  .chain((endpoint) =>
    fc
      .tuple(
        fc.constantFrom(...endpoints[endpoint].providers),
        endpoints[endpoint].streams ? fc.boolean() : fc.constant(false),
      )
      .chain(([provider, stream]) =>
        fc.record({
          endpoint: fc.constant(endpoint),
          provider: fc.constant(provider),
          stream: fc.constant(stream),
          moment: momentsFor(provider, endpoint, stream),
          leave: leaves,
          inputs: endpoint === 'embeddings' ? fc.integer({ min: 1, max: 450 }) : fc.constant(1),
        }),
      ),
  )
  // Many texts (several Gemini calls) where the calls' count is exact: held, answered whole, or never sent.
  .map((testCase) =>
    manyInputs.has(testCase.moment.kind) ? testCase : { ...testCase, inputs: Math.min(testCase.inputs, 2) },
  );

const runs = Number(process.env.FUZZ_RUNS ?? 120);

describe('generated client disconnects', () => {
  it(
    'every endpoint, provider, moment and way of leaving: no crash, the work stopped, one row, nothing left',
    async () => {
      // Timers the cases made, still keeping the process busy: a stream's keepalive left running shows here.
      const timers = startTimerCensus();
      try {
        await fc.assert(
          fc.asyncProperty(cases, (testCase) => runCase(testCase, { shared: false })),
          { numRuns: runs },
        );
        await waitFor('no timer left running', () => timers.running().length === 0).catch((error: Error) => {
          throw new Error(`${error.message}; made at:\n${timers.running().join('\n\n')}`);
        });
      } finally {
        timers.stop();
      }
    },
    600_000 + runs * 2_000,
  );

  it('a second account is served normally while clients of the first keep leaving', async () => {
    const db = setup.gateway.gateway.database.db;
    await createAccount(db, { name: 'bystander' });
    const { key, id: keyId } = await setup.gateway.newKey({ account: 'bystander', name: 'bystander-app' });
    let stop = false;
    const answers: Array<{ status: number; text: string; model: string }> = [];
    const bystander = (async () => {
      const models = ['via-openai', 'via-claude', 'via-gemini', 'tiny-chat'];
      for (let index = 0; !stop; index++) {
        const model = models[index % models.length] as string;
        const response = await fetch(`${setup.gateway.url}/v1/chat/completions`, {
          method: 'POST',
          headers: headersFor(key),
          body: JSON.stringify({
            model,
            messages: [{ role: 'user', content: `bystander ${index}` }],
            max_tokens: 4,
            stream: index % 2 === 0,
          }),
        });
        answers.push({ status: response.status, text: await response.text(), model });
      }
    })();
    try {
      await fc.assert(
        fc.asyncProperty(cases, (testCase) => runCase(testCase, { shared: true })),
        { numRuns: Math.max(10, Math.floor(runs / 3)) },
      );
    } finally {
      stop = true;
      await bystander;
    }
    expect(answers.length).toBeGreaterThan(0);
    for (const answer of answers) {
      expect(answer.status, JSON.stringify(answer)).toBe(200);
      if (answer.text.startsWith('data:'))
        expect(answer.text.trimEnd().endsWith('data: [DONE]'), answer.text).toBe(true);
    }
    await waitFor('nothing in flight', async () => (await inFlight()) === 0);
    const rows = await waitFor('the bystander rows', async () => {
      const found = await db.selectFrom('request_log').selectAll().where('key_id', '=', keyId).execute();
      return found.length >= answers.length && found;
    });
    expect(rows.length).toBe(answers.length);
    expect(rows.every((row) => row.status === 200 && row.outcome === 'success')).toBe(true);
  }, 600_000);
});
