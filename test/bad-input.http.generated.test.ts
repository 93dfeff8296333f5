import * as zlib from 'node:zlib';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { expectValidSuccess, postRaw, readAnswer } from './support/bad-input-oracle.js';
import { badInputGateway, type EndpointCase, endpointCases } from './support/bad-input-requests.js';
import { waitForLogRows } from './support/gateway.js';
import { useGatewayWithMock } from './support/gateway-fixture.js';

/**
 * Generated bad input below the JSON, on every endpoint: the bytes of a valid body broken (invalid UTF-8, lone
 * surrogates written as bytes or as escapes, a repeated member, a byte order mark, garbage after the document, the
 * body cut short), and the body sent compressed (`Content-Encoding` gzip, deflate, br, zstd, two codings, unknown
 * ones) under any content type. The answer is a valid success or a 4xx in the surface's error body, nothing reaches an
 * upstream that the gateway refused, every request is logged with the status the client saw, and the server keeps
 * serving. Fixed seed; `FUZZ_RUNS=2000` hunts longer. (The HTTP-level fixed cases: bad-input.http.test.ts.)
 */

const seed = Number(process.env.FUZZ_SEED ?? 20261127);
const runs = (count: number) => Number(process.env.FUZZ_RUNS ?? count);

const setup = useGatewayWithMock(badInputGateway);

afterAll(async () => {
  expect(setup.gateway.logLines.filter((line) => line.includes('unexpected error'))).toEqual([]);
  expect((await fetch(`${setup.gateway.url}/healthz`)).status).toBe(200);
});

const mocks = () => [setup.mock, setup.providerMocks.anthropic, setup.providerMocks.gemini];

function upstreamCalls(): number {
  return mocks().reduce((sum, mock) => sum + mock.requests.length, 0);
}

/** The request an upstream received last (one case runs at a time: the newest of the mocks' last requests). */
function lastUpstreamRequest(counts: number[]) {
  const index = mocks().findIndex((mock, at) => mock.requests.length > (counts[at] ?? 0));
  const request = mocks()[index]?.requests.at(-1);
  if (!request) throw new Error('no upstream request');
  return request;
}

/** Every answered request has one log row with the status the client saw (checked in bulk after each property). */
const answered = new Map<string, number>();

async function expectLoggedAsAnswered(): Promise<void> {
  const ids = [...answered.keys()];
  const rows = await waitForLogRows(setup.gateway, ids);
  for (const row of rows) expect([row.request_id, row.status]).toEqual([row.request_id, answered.get(row.request_id)]);
  answered.clear();
}

// ---------------------------------------------------------------------------------------------------------------------
// The bytes of a valid body, broken.

type Breakage =
  | { kind: 'bytes'; at: number; bytes: readonly number[] }
  | { kind: 'escape'; at: number; escape: string }
  | { kind: 'repeat-member'; value: unknown }
  | { kind: 'prefix'; bytes: readonly number[] }
  | { kind: 'suffix'; text: string }
  | { kind: 'cut'; at: number };

const invalidUtf8 = [
  [0xff],
  [0xc3],
  [0xc0, 0xaf],
  [0xed, 0xa0, 0x80],
  [0xed, 0xbf, 0xbf],
  [0xf4, 0x90, 0x80, 0x80],
  [0xe2, 0x82],
  [0x80],
];

const breakage: fc.Arbitrary<Breakage> = fc.oneof(
  fc.record({ kind: fc.constant('bytes' as const), at: fc.nat(), bytes: fc.constantFrom(...invalidUtf8) }),
  fc.record({
    kind: fc.constant('escape' as const),
    at: fc.nat(),
    escape: fc.constantFrom('\\ud800', '\\udfff', '\\ud83d', '\\u0000', '\\udc00\\ud800', '\\uFFFE'),
  }),
  fc.record({
    kind: fc.constant('repeat-member' as const),
    value: fc.oneof(fc.jsonValue({ maxDepth: 2 }), fc.constantFrom('no-such-model', 'claude-mock', 'gpt-4o-mini')),
  }),
  fc.record({
    kind: fc.constant('prefix' as const),
    bytes: fc.constantFrom([0xef, 0xbb, 0xbf], [0xfe, 0xff], [0x20, 0x0a, 0x09], [0x00]),
  }),
  fc.record({ kind: fc.constant('suffix' as const), text: fc.constantFrom('x', '}', ',', '{}', ' \n', '\u0000', '"') }),
  fc.record({ kind: fc.constant('cut' as const), at: fc.nat() }),
);

/** The body's text with one breakage; escapes and bytes go inside a string value, where a parser reads them. */
function broken(document: Record<string, unknown>, change: Breakage): Buffer {
  const text = JSON.stringify(document);
  const bytes = Buffer.from(text);
  // Positions just after an opening quote of a string value: where text bytes and escapes are read as text.
  const stringStarts = [...text.matchAll(/:"/g)].map((match) => Buffer.byteLength(text.slice(0, match.index + 2)));
  switch (change.kind) {
    case 'bytes': {
      const at = stringStarts[change.at % stringStarts.length] as number;
      return Buffer.concat([bytes.subarray(0, at), Buffer.from(change.bytes), bytes.subarray(at)]);
    }
    case 'escape': {
      const at = stringStarts[change.at % stringStarts.length] as number;
      return Buffer.concat([bytes.subarray(0, at), Buffer.from(change.escape), bytes.subarray(at)]);
    }
    case 'repeat-member': {
      const names = Object.keys(document);
      const name = names[JSON.stringify(change.value ?? null).length % names.length] as string;
      return Buffer.from(`${text.slice(0, -1)},${JSON.stringify(name)}:${JSON.stringify(change.value ?? null)}}`);
    }
    case 'prefix':
      return Buffer.concat([Buffer.from(change.bytes), bytes]);
    case 'suffix':
      return Buffer.concat([bytes, Buffer.from(change.text)]);
    case 'cut':
      return bytes.subarray(0, change.at % bytes.length);
  }
}

describe.each(endpointCases)('generated broken bytes on $path', (endpoint) => {
  it('answers a valid success or a 4xx in the surface’s shape, refusing without calling upstream', async () => {
    await fc.assert(
      fc.asyncProperty(breakage, async (change) => {
        const body = broken(endpoint.body, change);
        const before = upstreamCalls();
        const counts = mocks().map((mock) => mock.requests.length);
        const response = await postRaw(setup.gateway, endpoint.path, body);
        const context = `${endpoint.path} ${JSON.stringify(change)} ${body.toString('latin1').slice(0, 300)}`;
        const answer = await readAnswer(response, endpoint.surface, context);
        const calls = upstreamCalls() - before;
        answered.set(answer.requestId, answer.status);
        if (answer.status < 300) {
          expectValidSuccess(endpoint.path, answer, context);
          // Every byte the gateway took is text: a body that is not UTF-8 is never served.
          expect(change.kind === 'bytes' || (change.kind === 'prefix' && change.bytes[0] === 0xfe), context).toBe(
            false,
          );
        } else if (answer.status === 400) {
          expect(calls, context).toBe(0);
        }
        if (change.kind === 'bytes') {
          expect(answer.status, context).toBe(400);
          expect(answer.error.message, context).toBe('The request body is not valid UTF-8.');
        }
        if (change.kind === 'repeat-member' && calls > 0) {
          // The upstream was sent the one document the gateway checked, each member once: a parser that keeps the
          // first of two (not the last, as V8) would otherwise read another model or prompt than was authorized.
          const sent = lastUpstreamRequest(counts);
          expect(Number(sent.headers['content-length']), context).toBe(Buffer.byteLength(JSON.stringify(sent.body)));
        }
      }),
      { seed, numRuns: runs(40) },
    );
    await expectLoggedAsAnswered();
  });
});

// ---------------------------------------------------------------------------------------------------------------------
// The HTTP around the body.

// zstd came to node:zlib in Node 22.15; on older Nodes the gateway refuses it like any coding it cannot read.
const zstdCompressSync = (zlib as { zstdCompressSync?: (bytes: Buffer) => Buffer }).zstdCompressSync;
const encoders: Record<string, (bytes: Buffer) => Buffer> = {
  gzip: (bytes) => zlib.gzipSync(bytes),
  'x-gzip': (bytes) => zlib.gzipSync(bytes),
  deflate: (bytes) => zlib.deflateSync(bytes),
  br: (bytes) => zlib.brotliCompressSync(bytes),
  identity: (bytes) => bytes,
  ...(zstdCompressSync ? { zstd: zstdCompressSync } : {}),
};

interface HttpCase {
  endpoint: EndpointCase;
  encoding: string;
  contentType: string | undefined;
}

const httpCase: fc.Arbitrary<HttpCase> = fc.record({
  endpoint: fc.constantFrom(...endpointCases),
  encoding: fc.constantFrom('gzip', 'x-gzip', 'deflate', 'br', 'identity', 'gzip, br', 'zstd', 'compress', 'snappy'),
  contentType: fc.constantFrom(
    'application/json',
    'application/json; charset=utf-8',
    'application/json; charset=UTF-8',
    undefined,
    'text/plain',
    'application/x-www-form-urlencoded',
  ),
});

/** The body encoded as the header says (codings applied in the order listed), or undefined for one Node lacks. */
function encoded(body: Buffer, encoding: string): Buffer | undefined {
  let bytes = body;
  for (const coding of encoding.split(',').map((part) => part.trim())) {
    const encode = encoders[coding];
    if (!encode) return undefined;
    bytes = encode(bytes);
  }
  return bytes;
}

describe('generated content types and encodings', () => {
  it('decodes gzip, deflate and br bodies (and zstd where Node has it), refuses other codings with 415 by name', async () => {
    await fc.assert(
      fc.asyncProperty(httpCase, async ({ endpoint, encoding, contentType }) => {
        const plain = Buffer.from(JSON.stringify(endpoint.body));
        const counts = mocks().map((mock) => mock.requests.length);
        const before = upstreamCalls();
        // Codings Node cannot write are sent as they are: the gateway must refuse them before reading.
        const body = encoded(plain, encoding) ?? plain;
        const headers: Record<string, string> = { 'content-encoding': encoding };
        const response = await fetch(`${setup.gateway.url}${endpoint.path}`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${setup.gateway.key}`,
            'anthropic-version': '2023-06-01',
            ...(contentType === undefined ? {} : { 'content-type': contentType }),
            ...headers,
          },
          body: new Uint8Array(body),
        });
        const context = `${endpoint.path} content-encoding: ${encoding}, content-type: ${contentType}`;
        const answer = await readAnswer(response, endpoint.surface, context);
        answered.set(answer.requestId, answer.status);
        const decodable = encoded(plain, encoding) !== undefined;
        if (!decodable) {
          expect(answer.status, context).toBe(415);
          expect(answer.error.message, context).toContain(`'${encoding.split(',').at(-1)?.trim()}'`);
          expect(upstreamCalls(), context).toBe(before);
          return;
        }
        expect(answer.status, `${context} -> ${answer.text.slice(0, 300)}`).toBe(200);
        expectValidSuccess(endpoint.path, answer, context);
        if (upstreamCalls() > before) {
          const sent = lastUpstreamRequest(counts);
          // The upstream gets the decoded document, never the client's coding.
          expect(sent.headers['content-encoding'], context).toBeUndefined();
          expect(JSON.stringify(sent.body), context).toMatch(/Say|hello/);
        }
      }),
      { seed, numRuns: runs(60) },
    );
    await expectLoggedAsAnswered();
  });
});
