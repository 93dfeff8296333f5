import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { useGatewayWithMock } from './support/gateway-fixture.js';
import { type Mutation, mutate } from './support/json-mutation.js';
import { writeTinyGguf } from './support/tiny-gguf.js';

/**
 * Generated bad input on every endpoint, through every provider type: valid requests with one value replaced,
 * deleted or added (to reach the translations), and wrong shapes and arbitrary documents (chat's are in
 * bad-input.test.ts). Whatever arrives, the answer is a 2xx or a 4xx with the surface's error body (OpenAI's, or
 * Anthropic's on /v1/messages), a stream ends with its last event, never a 5xx, never a crash. `FUZZ_RUNS=3000` hunts
 * longer.
 */

let directory: string;

// Registered before the fixture, so it runs after the gateway closed (afterAll hooks run in reverse).
afterAll(() => {
  rmSync(directory, { recursive: true, force: true });
});

// The built-in local provider on a tiny random-weight model the test writes, beside the OpenAI, Anthropic and Gemini
// mocks.
const setup = useGatewayWithMock(() => {
  directory = mkdtempSync(path.join(tmpdir(), 'switchboard-fuzz-'));
  const tiny = path.join(directory, 'tiny.gguf');
  writeTinyGguf(tiny, { contextLength: 2048 });
  return {
    providerMocks: ['mock', 'tools'],
    providers: [{ name: 'tiny', type: 'local', model_path: tiny, max_concurrent: 2, threads: 1 }],
    models: [{ name: 'tiny-chat', provider: 'tiny' }],
  };
});

afterAll(async () => {
  expect(setup.gateway.logLines.filter((line) => line.includes('unexpected error'))).toEqual([]);
  expect((await fetch(`${setup.gateway.url}/healthz`)).status).toBe(200);
});

type Surface = 'openai' | 'anthropic';

const statuses = new Map<number, number>();
const terminalEvent = /^data: \[DONE\]$|^event: (response\.(completed|incomplete|failed)|message_stop|error)\n/;
afterAll(() => console.log(JSON.stringify([...statuses])));

async function post(path: string, body: string): Promise<Response> {
  return fetch(`${setup.gateway.url}${path}`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${setup.gateway.key}`,
      'x-api-key': setup.gateway.key,
      'anthropic-version': '2023-06-01',
      'content-type': 'application/json',
    },
    body,
  });
}

async function expectNoServerError(response: Response, surface: Surface, request: string): Promise<void> {
  const text = await response.text();
  const context = `${request.slice(0, 600)}\n-> ${response.status} ${text.slice(0, 600)}`;
  expect(response.status, context).toBeLessThan(500);
  if (response.status >= 300) {
    expect(response.headers.get('content-type'), context).toMatch(/^application\/json/);
    const body = JSON.parse(text);
    if (surface === 'openai') {
      expect(Object.keys(body.error).sort(), context).toEqual(['code', 'message', 'param', 'type']);
    } else {
      expect(body.type, context).toBe('error');
      expect(typeof body.error.type, context).toBe('string');
      expect(typeof body.error.message, context).toBe('string');
    }
    return;
  }
  if (response.headers.get('content-type')?.startsWith('text/event-stream')) {
    // A stream ends with its surface's last event (a failure after the start included), never just stops.
    const last = text.trimEnd().split('\n\n').at(-1) ?? '';
    expect(last, context).toMatch(terminalEvent);
  }
}

const models = fc.constantFrom(
  'mock',
  'claude-mock',
  'gemini-mock',
  'claude-tools',
  'gemini-tools',
  'tiny-chat',
  'no-such-model',
);
const anyValue = fc.oneof(fc.jsonValue(), fc.constant(undefined));
const text = fc.oneof(fc.string({ maxLength: 40 }), fc.jsonValue());

const responsesItem = fc.oneof(
  fc.record(
    {
      type: fc.oneof(
        fc.constantFrom(
          'message',
          'function_call',
          'function_call_output',
          'reasoning',
          'item_reference',
          'web_search_call',
        ),
        fc.string(),
      ),
      role: fc.oneof(fc.constantFrom('user', 'assistant', 'system', 'developer'), fc.string()),
      content: fc.oneof(
        text,
        fc.array(
          fc.record(
            {
              type: fc.oneof(
                fc.constantFrom('input_text', 'output_text', 'input_image', 'input_file', 'refusal'),
                fc.string(),
              ),
              text: anyValue,
              image_url: anyValue,
              file_data: anyValue,
              file_id: anyValue,
              detail: anyValue,
            },
            { requiredKeys: [] },
          ),
          { maxLength: 3 },
        ),
      ),
      call_id: anyValue,
      name: anyValue,
      arguments: anyValue,
      output: anyValue,
      id: anyValue,
      summary: anyValue,
      encrypted_content: anyValue,
    },
    { requiredKeys: [] },
  ),
  fc.jsonValue(),
);
const responsesRequest = fc.record(
  {
    model: fc.oneof(models, fc.jsonValue()),
    input: fc.oneof(fc.string({ maxLength: 40 }), fc.array(responsesItem, { maxLength: 4 }), fc.jsonValue()),
    instructions: text,
    stream: fc.oneof(fc.boolean(), fc.jsonValue()),
    store: fc.oneof(fc.boolean(), fc.jsonValue()),
    previous_response_id: fc.oneof(fc.constant('resp_nope'), fc.jsonValue()),
    tools: anyValue,
    tool_choice: anyValue,
    parallel_tool_calls: anyValue,
    text: fc.oneof(
      fc.record({ format: fc.record({ type: fc.constantFrom('text', 'json_schema', 'json_object', 'x') }) }),
      fc.jsonValue(),
    ),
    reasoning: anyValue,
    include: anyValue,
    max_output_tokens: fc.oneof(fc.integer({ min: -5, max: 50 }), fc.jsonValue()),
    temperature: anyValue,
    top_p: anyValue,
    metadata: anyValue,
    truncation: anyValue,
    unknown_field: anyValue,
  },
  { requiredKeys: [] },
);

const anthropicBlock = fc.oneof(
  fc.record(
    {
      type: fc.oneof(
        fc.constantFrom('text', 'image', 'document', 'tool_use', 'tool_result', 'thinking', 'redacted_thinking'),
        fc.string(),
      ),
      text: anyValue,
      source: anyValue,
      id: anyValue,
      name: anyValue,
      input: anyValue,
      tool_use_id: anyValue,
      content: anyValue,
      thinking: anyValue,
      signature: anyValue,
      cache_control: anyValue,
    },
    { requiredKeys: [] },
  ),
  fc.jsonValue(),
);
const messagesRequest = fc.record(
  {
    model: fc.oneof(models, fc.jsonValue()),
    max_tokens: fc.oneof(fc.integer({ min: -5, max: 50 }), fc.jsonValue()),
    messages: fc.oneof(
      fc.array(
        fc.record(
          {
            role: fc.oneof(fc.constantFrom('user', 'assistant'), fc.string()),
            content: fc.oneof(text, fc.array(anthropicBlock, { maxLength: 3 })),
          },
          { requiredKeys: [] },
        ),
        { maxLength: 4 },
      ),
      fc.jsonValue(),
    ),
    system: fc.oneof(text, fc.array(anthropicBlock, { maxLength: 2 })),
    stream: fc.oneof(fc.boolean(), fc.jsonValue()),
    tools: anyValue,
    tool_choice: anyValue,
    thinking: anyValue,
    stop_sequences: anyValue,
    temperature: anyValue,
    top_k: anyValue,
    metadata: anyValue,
    unknown_field: anyValue,
  },
  { requiredKeys: [] },
);

const embeddingsRequest = fc.record(
  {
    model: fc.oneof(models, fc.jsonValue()),
    input: fc.oneof(
      fc.string({ maxLength: 40 }),
      fc.array(fc.string({ maxLength: 10 }), { maxLength: 4 }),
      fc.array(fc.integer({ min: -2, max: 100_000 }), { maxLength: 6 }),
      fc.array(fc.array(fc.integer({ min: -2, max: 100_000 }), { maxLength: 4 }), { maxLength: 3 }),
      fc.jsonValue(),
    ),
    encoding_format: fc.oneof(fc.constantFrom('float', 'base64', 'x'), fc.jsonValue()),
    dimensions: anyValue,
    user: anyValue,
  },
  { requiredKeys: [] },
);

const completionsRequest = fc.record(
  {
    model: fc.oneof(models, fc.jsonValue()),
    prompt: fc.oneof(
      fc.string({ maxLength: 40 }),
      fc.array(fc.string({ maxLength: 10 }), { maxLength: 3 }),
      fc.array(fc.integer({ min: -2, max: 100_000 }), { maxLength: 6 }),
      fc.jsonValue(),
    ),
    stream: fc.oneof(fc.boolean(), fc.jsonValue()),
    stream_options: anyValue,
    max_tokens: fc.oneof(fc.integer({ min: -5, max: 50 }), fc.jsonValue()),
    suffix: anyValue,
    echo: anyValue,
    logprobs: anyValue,
    best_of: anyValue,
    n: anyValue,
    stop: anyValue,
    unknown_field: anyValue,
  },
  { requiredKeys: [] },
);

const mutation: fc.Arbitrary<Mutation> = fc.record({
  kind: fc.constantFrom('none', 'replace', 'replace', 'delete', 'add'),
  at: fc.nat(),
  value: fc.oneof(
    fc.jsonValue(),
    fc.constantFrom('', -1, 0, 1e308, 'x'.repeat(5000), [], {}, null, true, '\u0000', '{"a":'),
  ),
});

const validModels = fc.constantFrom('mock', 'claude-mock', 'gemini-mock', 'claude-tools', 'gemini-tools', 'tiny-chat');
const word = fc.constantFrom('hello', 'Say hi', 'What is the weather in Paris?', 'ünïcödé ✓', '');
const schema = fc.constant({ type: 'object', properties: { city: { type: 'string' } }, required: ['city'] });

const validResponsesItem = fc.oneof(
  fc.record({
    type: fc.constant('message'),
    role: fc.constantFrom('user', 'assistant', 'developer', 'system'),
    content: fc.oneof(word, fc.constant([{ type: 'input_text', text: 'hello' }])),
  }),
  fc.constant({
    type: 'message',
    role: 'user',
    content: [{ type: 'input_image', image_url: 'data:image/png;base64,iVBORw0KGgo=' }],
  }),
  fc.constant({ type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' }),
  fc.constant({ type: 'function_call_output', call_id: 'call_1', output: 'sunny' }),
  fc.constant({
    type: 'reasoning',
    id: 'rs_1',
    summary: [{ type: 'summary_text', text: 'thinking' }],
    encrypted_content: 'abc',
  }),
);
const validResponses = fc.record(
  {
    model: validModels,
    input: fc.oneof(word, fc.array(validResponsesItem, { minLength: 1, maxLength: 4 })),
    instructions: word,
    stream: fc.boolean(),
    store: fc.boolean(),
    tools: fc.constant([
      {
        type: 'function',
        name: 'get_weather',
        parameters: { type: 'object', properties: { city: { type: 'string' } } },
      },
    ]),
    tool_choice: fc.constantFrom('auto', 'none', 'required', { type: 'function', name: 'get_weather' }),
    parallel_tool_calls: fc.boolean(),
    text: schema.map((value) => ({ format: { type: 'json_schema', name: 'weather', schema: value, strict: true } })),
    reasoning: fc.constant({ effort: 'low', summary: 'auto' }),
    include: fc.constant(['reasoning.encrypted_content']),
    max_output_tokens: fc.integer({ min: 1, max: 100 }),
    temperature: fc.double({ min: 0, max: 2, noNaN: true }),
    top_p: fc.double({ min: 0, max: 1, noNaN: true }),
    metadata: fc.constant({ purpose: 'fuzz' }),
  },
  { requiredKeys: ['model', 'input'] },
);

const validMessages = fc.record(
  {
    model: validModels,
    max_tokens: fc.integer({ min: 1, max: 100 }),
    messages: fc.constantFrom(
      [{ role: 'user', content: 'hello' }],
      [{ role: 'user', content: [{ type: 'text', text: 'hello', cache_control: { type: 'ephemeral' } }] }],
      [
        { role: 'user', content: 'weather?' },
        {
          role: 'assistant',
          content: [{ type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } }],
        },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'sunny' }] },
      ],
      [
        { role: 'user', content: 'think' },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'hmm', signature: 'sig' },
            { type: 'text', text: 'ok' },
          ],
        },
        {
          role: 'user',
          content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } }],
        },
      ],
    ),
    system: fc.oneof(word, fc.constant([{ type: 'text', text: 'be brief' }])),
    stream: fc.boolean(),
    tools: fc.constant([
      {
        name: 'get_weather',
        description: 'weather',
        input_schema: { type: 'object', properties: { city: { type: 'string' } } },
      },
    ]),
    tool_choice: fc.constantFrom(
      { type: 'auto' },
      { type: 'any' },
      { type: 'tool', name: 'get_weather' },
      { type: 'none' },
    ),
    thinking: fc.constant({ type: 'enabled', budget_tokens: 1024 }),
    stop_sequences: fc.constant(['END']),
    temperature: fc.double({ min: 0, max: 1, noNaN: true }),
    top_k: fc.integer({ min: 1, max: 50 }),
    metadata: fc.constant({ user_id: 'u1' }),
  },
  { requiredKeys: ['model', 'max_tokens', 'messages'] },
);

const validEmbeddings = fc.record(
  {
    model: validModels,
    input: fc.oneof(word, fc.constant(['a', 'b']), fc.constant([1, 2, 3]), fc.constant([[1, 2], [3]])),
    encoding_format: fc.constantFrom('float', 'base64'),
    dimensions: fc.integer({ min: 1, max: 8 }),
    user: fc.constant('u1'),
  },
  { requiredKeys: ['model', 'input'] },
);

const validCompletions = fc.record(
  {
    model: validModels,
    prompt: fc.oneof(word, fc.constant(['a', 'b']), fc.constant([1, 2, 3])),
    stream: fc.boolean(),
    stream_options: fc.constant({ include_usage: true }),
    max_tokens: fc.integer({ min: 1, max: 50 }),
    suffix: fc.constant('end'),
    echo: fc.boolean(),
    stop: fc.constant(['\n']),
    n: fc.constant(1),
  },
  { requiredKeys: ['model', 'prompt'] },
);

const validChat = fc.record(
  {
    model: validModels,
    messages: fc.constantFrom(
      [{ role: 'user', content: 'hello' }],
      [
        { role: 'system', content: 'be brief' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'look' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
          ],
        },
      ],
      [
        { role: 'user', content: 'weather?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_1', content: 'sunny' },
      ],
    ),
    stream: fc.boolean(),
    stream_options: fc.constant({ include_usage: true }),
    tools: fc.constant([
      {
        type: 'function',
        function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
      },
    ]),
    tool_choice: fc.constantFrom('auto', 'none', 'required', { type: 'function', function: { name: 'get_weather' } }),
    response_format: schema.map((value) => ({ type: 'json_schema', json_schema: { name: 'weather', schema: value } })),
    max_tokens: fc.integer({ min: 1, max: 100 }),
    max_completion_tokens: fc.integer({ min: 1, max: 100 }),
    temperature: fc.double({ min: 0, max: 2, noNaN: true }),
    stop: fc.constant(['END']),
    n: fc.constant(1),
    reasoning_effort: fc.constantFrom('low', 'medium', 'high'),
    user: fc.constant('u1'),
  },
  { requiredKeys: ['model', 'messages'] },
);

const nearlyRight = (valid: fc.Arbitrary<Record<string, unknown>>) =>
  fc.tuple(valid, mutation).map(([document, change]) => mutate(document, change));

const nearlyRightCases: { path: string; surface: Surface; valid: fc.Arbitrary<Record<string, unknown>> }[] = [
  { path: '/v1/chat/completions', surface: 'openai', valid: validChat },
  { path: '/v1/responses', surface: 'openai', valid: validResponses },
  { path: '/v1/messages', surface: 'anthropic', valid: validMessages },
  { path: '/v1/messages/count_tokens', surface: 'anthropic', valid: validMessages },
  { path: '/v1/embeddings', surface: 'openai', valid: validEmbeddings },
  { path: '/v1/completions', surface: 'openai', valid: validCompletions },
];

// Chat's arbitrary documents and wrong shapes are in bad-input.test.ts.
const wrongShapeCases: { path: string; surface: Surface; request: fc.Arbitrary<Record<string, unknown>> }[] = [
  { path: '/v1/responses', surface: 'openai', request: responsesRequest },
  { path: '/v1/messages', surface: 'anthropic', request: messagesRequest },
  { path: '/v1/messages/count_tokens', surface: 'anthropic', request: messagesRequest },
  { path: '/v1/embeddings', surface: 'openai', request: embeddingsRequest },
  { path: '/v1/completions', surface: 'openai', request: completionsRequest },
];

describe.each(nearlyRightCases)(
  'generated nearly right input on $path, through every provider',
  ({ path, surface, valid }) => {
    it('a valid request with one value replaced, deleted or added', async () => {
      await fc.assert(
        fc.asyncProperty(nearlyRight(valid), async (value) => {
          const body = JSON.stringify(value);
          await expectNoServerError(await post(path, body), surface, body);
        }),
        { numRuns: Number(process.env.FUZZ_RUNS ?? 300) },
      );
    });
  },
);

describe.each(wrongShapeCases)('generated bad input on $path', ({ path, surface, request }) => {
  it('arbitrary JSON documents', async () => {
    await fc.assert(
      fc.asyncProperty(fc.jsonValue(), async (value) => {
        const body = JSON.stringify(value) ?? 'null';
        await expectNoServerError(await post(path, body), surface, body);
      }),
      { numRuns: 60 },
    );
  });

  it('requests with every field of the wrong shape, type or range', async () => {
    await fc.assert(
      fc.asyncProperty(request, async (value) => {
        const body = JSON.stringify(value);
        await expectNoServerError(await post(path, body), surface, body);
      }),
      { numRuns: 250 },
    );
  });
});
