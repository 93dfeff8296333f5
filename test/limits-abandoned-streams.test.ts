import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type GatedUpstream, startGatedUpstream } from './support/gated-upstream.js';
import { waitForLogRows } from './support/gateway.js';
import { useGatewayWithMock } from './support/gateway-fixture.js';
import { type MockAnthropicUpstream, startMockAnthropicUpstream } from './support/mock-anthropic-upstream.js';
import type { RecordedRequest } from './support/mock-openai-upstream.js';

/**
 * docs/operations.md, "Limits and budgets": streaming cannot dodge a budget. A client that reads part of a stream and
 * then leaves has its stream's cost counted all the same: at least the text it was sent, whichever endpoint it called
 * and however the gateway reached the upstream (translated, or passed through as the upstream's own stream). The
 * upstream is held behind a gate after some of its events, so the client leaves at a known point, before the upstream
 * reported its final usage.
 */

let anthropic: MockAnthropicUpstream;
let openaiTarget = '';
const gates = {} as { openai: GatedUpstream; anthropic: GatedUpstream };

afterAll(async () => {
  await gates.openai?.close();
  await gates.anthropic?.close();
  await anthropic?.close();
});
beforeAll(async () => {
  anthropic = await startMockAnthropicUpstream();
  gates.openai = await startGatedUpstream(() => openaiTarget);
  gates.anthropic = await startGatedUpstream(() => anthropic.url);
});

/** A native Responses stream of many text deltas, ending with usage in `response.completed` (as OpenAI's does). */
function nativeLongStream(_request: RecordedRequest, response: ServerResponse): void {
  response.writeHead(200, { 'content-type': 'text/event-stream' });
  let sequence = 0;
  const send = (type: string, data: Record<string, unknown>) =>
    response.write(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence++, ...data })}\n\n`);
  const created = { id: 'resp_long', object: 'response', status: 'in_progress', output: [], usage: null };
  send('response.created', { response: created });
  send('response.output_item.added', {
    output_index: 0,
    item: { id: 'msg_long', type: 'message', status: 'in_progress', content: [], role: 'assistant' },
  });
  const pieces = Array.from({ length: 60 }, (_, index) => `word${index} `);
  for (const piece of pieces) {
    send('response.output_text.delta', { item_id: 'msg_long', output_index: 0, content_index: 0, delta: piece });
  }
  const text = pieces.join('');
  send('response.completed', {
    response: {
      ...created,
      status: 'completed',
      output: [
        {
          id: 'msg_long',
          type: 'message',
          status: 'completed',
          role: 'assistant',
          content: [{ type: 'output_text', text, annotations: [] }],
        },
      ],
      usage: { input_tokens: 10, output_tokens: 120, total_tokens: 130 },
    },
  });
  response.end();
}

const patient = { connect: '60s', first_byte: '60s', idle: '60s' };
const pricing = { input: 1, output: 2 };
const setup = useGatewayWithMock((mock) => {
  openaiTarget = mock.url;
  return {
    upstreamHandlers: { 'native-long': nativeLongStream },
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
    ],
    models: [
      { name: 'via-openai', provider: 'gated-openai', upstream_model: 'mock', pricing },
      { name: 'via-claude', provider: 'gated-claude', upstream_model: 'mock', pricing },
      {
        name: 'via-native',
        provider: 'gated-openai',
        upstream_model: 'native-long',
        responses_api: 'native',
        pricing,
      },
    ],
  };
});

type Endpoint = 'chat' | 'responses' | 'messages' | 'completions';

const paths: Record<Endpoint, string> = {
  chat: '/v1/chat/completions',
  responses: '/v1/responses',
  messages: '/v1/messages',
  completions: '/v1/completions',
};

/** The generated text inside the events received so far (each endpoint's delta field). */
const deltaPatterns: Record<Endpoint, RegExp> = {
  chat: /"content":"((?:[^"\\]|\\.)*)"/g,
  responses: /"type":"response\.output_text\.delta"[^\n]*?"delta":"((?:[^"\\]|\\.)*)"/g,
  messages: /"type":"text_delta","text":"((?:[^"\\]|\\.)*)"/g,
  completions: /"text":"((?:[^"\\]|\\.)*)"/g,
};

function receivedText(endpoint: Endpoint, raw: string): string {
  return [...raw.matchAll(deltaPatterns[endpoint])].map((match) => JSON.parse(`"${match[1]}"`) as string).join('');
}

function bodyFor(endpoint: Endpoint, model: string, text: string): Record<string, unknown> {
  switch (endpoint) {
    case 'chat':
      return { model, stream: true, max_tokens: 500, messages: [{ role: 'user', content: text }] };
    case 'responses':
      return { model, stream: true, max_output_tokens: 500, input: text };
    case 'messages':
      return { model, stream: true, max_tokens: 500, messages: [{ role: 'user', content: text }] };
    case 'completions':
      return { model, stream: true, max_tokens: 500, prompt: text };
  }
}

let markers = 0;

/** Streams a long answer held after `pieces` upstream events, reads until it got some text, and leaves. */
async function abandon(endpoint: Endpoint, model: string, gate: GatedUpstream, pieces: number) {
  const marker = `abandon-${++markers}`;
  gate.plan(marker, { piecesBeforeHold: pieces });
  // The mocks echo the prompt: a long one makes a long answer, sent in many small deltas.
  const text = `Say ${marker} ${'lorem ipsum '.repeat(40)}`;
  const controller = new AbortController();
  const response = await fetch(`${setup.gateway.url}${paths[endpoint]}`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${setup.gateway.key}`,
      'content-type': 'application/json',
      'anthropic-version': '2023-06-01',
    },
    body: JSON.stringify(bodyFor(endpoint, model, text)),
    signal: controller.signal,
  });
  expect(response.status).toBe(200);
  const requestId = response.headers.get('x-request-id') as string;
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let raw = '';
  // Enough text that its cost is clearly more than the prompt's: the first dozen deltas or so.
  while (receivedText(endpoint, raw).length < 60) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`the stream ended before the client left: ${raw.slice(-300)}`);
    raw += decoder.decode(value, { stream: true });
  }
  controller.abort();
  await reader.cancel().catch(() => undefined);
  const [row] = await waitForLogRows(setup.gateway, [requestId]);
  return {
    row: row as { completion_tokens: number | null; cost_usd: number | null; status: number },
    received: receivedText(endpoint, raw),
  };
}

const cases: Array<{ endpoint: Endpoint; model: string; gate: 'openai' | 'anthropic'; pieces: number }> = [
  { endpoint: 'chat', model: 'via-openai', gate: 'openai', pieces: 30 },
  { endpoint: 'chat', model: 'via-claude', gate: 'anthropic', pieces: 30 },
  { endpoint: 'messages', model: 'via-claude', gate: 'anthropic', pieces: 30 },
  { endpoint: 'messages', model: 'via-openai', gate: 'openai', pieces: 30 },
  { endpoint: 'responses', model: 'via-openai', gate: 'openai', pieces: 30 },
  { endpoint: 'responses', model: 'via-claude', gate: 'anthropic', pieces: 30 },
  { endpoint: 'responses', model: 'via-native', gate: 'openai', pieces: 30 },
  { endpoint: 'completions', model: 'via-openai', gate: 'openai', pieces: 30 },
];

describe('a stream its client abandons half-way', () => {
  for (const { endpoint, model, gate, pieces } of cases) {
    it(`counts the text it was sent: ${endpoint} through ${model}`, async () => {
      const { row, received } = await abandon(endpoint, model, gates[gate], pieces);
      expect(row.status).toBe(499);
      // The gateway's own estimate is a token per four characters; the client got at least this much text.
      expect(row.completion_tokens ?? 0).toBeGreaterThanOrEqual(Math.ceil(received.length / 4));
      expect(row.cost_usd ?? 0).toBeGreaterThan(0);
    });
  }
});
