import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import {
  type Answer,
  expectValidSuccess,
  fieldName,
  namedField,
  namesChatPath,
  pointsInto,
  postRaw,
  readAnswer,
  type Surface,
} from './support/bad-input-oracle.js';
import { waitForLogRows } from './support/gateway.js';
import { useGatewayWithMock } from './support/gateway-fixture.js';
import { type Mutation, mutate } from './support/json-mutation.js';

/**
 * Generated bad input, one field at a time, on every data-plane endpoint through every provider type it reaches (the
 * OpenAI-compatible, Anthropic and Gemini mocks). Each case is a valid request with one field made wrong in a way the
 * wire contract forbids (a wrong JSON type, a number out of range, fractional, too large to be exact or not finite, an
 * empty string or array, an unknown enum value, a required field dropped or null): the answer is a 400 in the surface's
 * error body whose `param` (OpenAI) or message path (Anthropic) names that field, no upstream was called, and the log
 * row has the same status. A second property mutates valid requests anywhere (any value replaced, dropped or given a
 * sibling): the answer is a valid success or a 4xx naming a field that is in the request, the same whichever provider
 * serves the model when the gateway decided it, and never a call upstream for what the gateway refused. Fixed seeds;
 * `FUZZ_RUNS=2000` hunts longer.
 */

const seed = Number(process.env.FUZZ_SEED ?? 20261127);
const runs = (count: number) => Number(process.env.FUZZ_RUNS ?? count);

const setup = useGatewayWithMock({
  providerMocks: ['mock', 'tools'],
  models: [
    { name: 'embed-openai', provider: 'mock', upstream_model: 'mock', capabilities: ['embeddings'] },
    { name: 'embed-gemini', provider: 'google', upstream_model: 'mock', capabilities: ['embeddings'] },
  ],
});

afterAll(async () => {
  expect(setup.gateway.logLines.filter((line) => line.includes('unexpected error'))).toEqual([]);
  // Whatever was answered was kept: no stored response was lost to a value the database could not hold.
  expect(setup.gateway.logLines.filter((line) => line.includes('storing a response failed'))).toEqual([]);
  expect((await fetch(`${setup.gateway.url}/healthz`)).status).toBe(200);
});

function upstreamCalls(): number {
  return (
    setup.mock.requests.length +
    setup.providerMocks.anthropic.requests.length +
    setup.providerMocks.gemini.requests.length
  );
}

interface Exchange {
  answer: Answer;
  /** Upstream requests the exchange caused. */
  calls: number;
}

/** Placeholders for JSON numbers JSON.stringify cannot write (they parse to ±Infinity). */
const rawNumbers: Record<string, string> = { __raw_huge__: '1e999', __raw_minus_huge__: '-1e999' };

function serialize(document: unknown): string {
  let text = JSON.stringify(document) ?? 'null';
  for (const [placeholder, raw] of Object.entries(rawNumbers)) text = text.replaceAll(`"${placeholder}"`, raw);
  return text;
}

async function exchange(path: string, surface: Surface, body: string): Promise<Exchange> {
  const before = upstreamCalls();
  const answer = await readAnswer(await postRaw(setup.gateway, path, body), surface, `POST ${path} ${body}`);
  return { answer, calls: upstreamCalls() - before };
}

/** Every answered request has one log row with the status the client saw (checked in bulk after each property). */
const answered = new Map<string, number>();

async function expectLoggedAsAnswered(): Promise<void> {
  const ids = [...answered.keys()];
  const rows = await waitForLogRows(setup.gateway, ids);
  expect(rows.length).toBe(ids.length);
  for (const row of rows) expect([row.request_id, row.status]).toEqual([row.request_id, answered.get(row.request_id)]);
  answered.clear();
}

// ---------------------------------------------------------------------------------------------------------------------
// One field made wrong: the contract's types and ranges, per endpoint.

type Kind =
  | { type: 'string'; nonEmpty?: boolean; bad?: unknown[] }
  | { type: 'boolean' }
  | { type: 'number'; min: number; max: number }
  | { type: 'integer'; min: number; max?: number }
  | { type: 'object' }
  | { type: 'array'; nonEmpty?: boolean }
  /** A string or an array (of parts, of stop strings, of inputs). */
  | { type: 'string-or-array'; nonEmpty?: boolean }
  | { type: 'enum'; values: readonly string[] }
  /** A type tag any string may fill: unknown ones are kept for the upstreams that know them (forward compatible). */
  | { type: 'tag' };

interface FieldSpec {
  /** A valid request holding the field (the endpoint's minimal request when absent). */
  base?: Record<string, unknown>;
  path: (string | number)[];
  kind: Kind;
  required?: boolean;
  /** The field the error names, when it is not the path (logit_bias names the map, not the token). */
  param?: string;
}

const outOfType: readonly unknown[] = ['x', 7, 2.5, true, false, {}, { a: 1 }, [], ['x'], '__raw_huge__'];

function badValues(kind: Kind, required: boolean): unknown[] {
  const wrongTypes = (keep: (value: unknown) => boolean) => outOfType.filter((value) => !keep(value));
  const isString = (value: unknown) => typeof value === 'string' && !value.startsWith('__raw');
  const isNumber = (value: unknown) => typeof value === 'number' || value === '__raw_huge__';
  const values: unknown[] = required ? [undefined, null] : [];
  switch (kind.type) {
    case 'string':
      values.push(...wrongTypes(isString), ...(kind.nonEmpty ? [''] : []), ...(kind.bad ?? []));
      break;
    case 'boolean':
      values.push(...wrongTypes((value) => typeof value === 'boolean'), 'true', 0, 1);
      break;
    case 'number':
      values.push(
        ...wrongTypes(isNumber),
        'NaN',
        '1',
        '__raw_huge__',
        '__raw_minus_huge__',
        kind.min - 0.001,
        kind.max + 0.001,
        -1e308,
        1e308,
      );
      break;
    case 'integer':
      values.push(
        ...wrongTypes(isNumber),
        '1',
        '__raw_huge__',
        '__raw_minus_huge__',
        // A fraction a double can hold beside the minimum (near 2^53 it would round to an integer).
        Math.abs(kind.min) < 2 ** 40 ? kind.min + 0.5 : 0.5,
        kind.min - 1,
        -1e308,
        1e308,
        2 ** 53,
        ...(kind.max === undefined ? [] : [kind.max + 1]),
      );
      break;
    case 'object':
      values.push(...wrongTypes((value) => typeof value === 'object' && value !== null && !Array.isArray(value)));
      break;
    case 'array':
      values.push(...wrongTypes(Array.isArray), ...(kind.nonEmpty ? [[]] : []));
      break;
    case 'string-or-array':
      values.push(...wrongTypes((value) => isString(value) || Array.isArray(value)), ...(kind.nonEmpty ? [[]] : []));
      break;
    case 'tag':
      values.push(...wrongTypes(isString));
      break;
    case 'enum':
      values.push(...wrongTypes(() => false).filter((value) => !kind.values.includes(value as string)), 'nope', '');
      break;
  }
  return values;
}

function withField(base: Record<string, unknown>, path: (string | number)[], value: unknown): unknown {
  const copy = structuredClone(base);
  // biome-ignore lint/suspicious/noExplicitAny: walking a JSON document
  let parent: any = copy;
  for (const step of path.slice(0, -1)) parent = parent[step];
  const last = path.at(-1) as string | number;
  if (value === undefined) delete parent[last];
  else parent[last] = value;
  return copy;
}

const user = [{ role: 'user', content: 'hi' }];
const chatTool = { type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } };
const responsesTool = { type: 'function', name: 'get_weather', parameters: { type: 'object' } };
const messagesTool = { name: 'get_weather', input_schema: { type: 'object' } };
const samplingNumbers = (prefix: string[] = []): FieldSpec[] => [
  { path: [...prefix, 'temperature'], kind: { type: 'number', min: 0, max: 2 } },
  { path: [...prefix, 'top_p'], kind: { type: 'number', min: 0, max: 1 } },
  { path: [...prefix, 'presence_penalty'], kind: { type: 'number', min: -2, max: 2 } },
  { path: [...prefix, 'frequency_penalty'], kind: { type: 'number', min: -2, max: 2 } },
];

const chatFields: FieldSpec[] = [
  { path: ['model'], kind: { type: 'string', nonEmpty: true }, required: true },
  { path: ['messages'], kind: { type: 'array', nonEmpty: true }, required: true },
  { path: ['messages', 0], kind: { type: 'object' } },
  { path: ['messages', 0, 'role'], kind: { type: 'enum', values: ['user'] }, required: true },
  { path: ['messages', 0, 'content'], kind: { type: 'string-or-array', nonEmpty: true }, required: true },
  { path: ['messages', 0, 'name'], kind: { type: 'string' } },
  {
    base: { messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }] },
    path: ['messages', 0, 'content', 0, 'type'],
    kind: { type: 'enum', values: ['text'] },
    required: true,
  },
  {
    base: { messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }] },
    path: ['messages', 0, 'content', 0, 'text'],
    kind: { type: 'string' },
    required: true,
  },
  {
    base: { messages: [{ role: 'tool', tool_call_id: 'call_1', content: 'sunny' }] },
    path: ['messages', 0, 'tool_call_id'],
    kind: { type: 'string' },
    required: true,
  },
  ...samplingNumbers(),
  { path: ['n'], kind: { type: 'integer', min: 1, max: 128 } },
  { path: ['max_tokens'], kind: { type: 'integer', min: 1 } },
  { path: ['max_completion_tokens'], kind: { type: 'integer', min: 1 } },
  { path: ['logprobs'], kind: { type: 'boolean' } },
  { base: { logprobs: true }, path: ['top_logprobs'], kind: { type: 'integer', min: 0, max: 20 } },
  { path: ['seed'], kind: { type: 'integer', min: Number.MIN_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER } },
  { path: ['stop'], kind: { type: 'string-or-array' } },
  { base: { stop: ['a'] }, path: ['stop', 0], kind: { type: 'string' } },
  { path: ['stream'], kind: { type: 'boolean' } },
  { path: ['parallel_tool_calls'], kind: { type: 'boolean' } },
  { path: ['store'], kind: { type: 'boolean' } },
  { path: ['user'], kind: { type: 'string' } },
  { base: { stream: true }, path: ['stream_options'], kind: { type: 'object' } },
  {
    base: { stream: true, stream_options: { include_usage: true } },
    path: ['stream_options', 'include_usage'],
    kind: { type: 'boolean' },
    // OpenAI's own name for it on chat (validate-chat-request.ts); legacy completions name the whole path.
    param: 'include_usage',
  },
  { path: ['tools'], kind: { type: 'array' } },
  { base: { tools: [chatTool] }, path: ['tools', 0], kind: { type: 'object' } },
  { base: { tools: [chatTool] }, path: ['tools', 0, 'function'], kind: { type: 'object' }, required: true },
  {
    base: { tools: [chatTool] },
    path: ['tools', 0, 'function', 'name'],
    kind: { type: 'string', bad: ['', 'has space', 'x'.repeat(65)] },
    required: true,
  },
  { base: { tools: [chatTool] }, path: ['tools', 0, 'function', 'parameters'], kind: { type: 'object' } },
  { base: { tools: [chatTool] }, path: ['tools', 0, 'function', 'description'], kind: { type: 'string' } },
  { base: { tools: [chatTool] }, path: ['tools', 0, 'function', 'strict'], kind: { type: 'boolean' } },
  {
    base: { tools: [chatTool], tool_choice: 'auto' },
    path: ['tool_choice'],
    kind: { type: 'enum', values: ['auto'] },
  },
  { path: ['response_format'], kind: { type: 'object' } },
  {
    base: { response_format: { type: 'text' } },
    path: ['response_format', 'type'],
    kind: { type: 'enum', values: ['text'] },
  },
  {
    base: { response_format: { type: 'json_schema', json_schema: { name: 'weather', schema: { type: 'object' } } } },
    path: ['response_format', 'json_schema', 'name'],
    kind: { type: 'string', bad: ['', 'has space', 'x'.repeat(65)] },
    required: true,
  },
  { path: ['metadata'], kind: { type: 'object' } },
  {
    base: { logit_bias: { '50256': 1 } },
    path: ['logit_bias', '50256'],
    kind: { type: 'number', min: -100, max: 100 },
    param: 'logit_bias',
  },
];

const responsesFields: FieldSpec[] = [
  { path: ['model'], kind: { type: 'string', nonEmpty: true }, required: true },
  { path: ['input'], kind: { type: 'string-or-array' }, required: true },
  { base: { input: user }, path: ['input', 0], kind: { type: 'object' } },
  { base: { input: user }, path: ['input', 0, 'role'], kind: { type: 'enum', values: ['user'] }, required: true },
  { base: { input: user }, path: ['input', 0, 'content'], kind: { type: 'string-or-array' }, required: true },
  {
    base: { input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hi' }] }] },
    path: ['input', 0, 'content', 0, 'type'],
    kind: { type: 'enum', values: ['input_text'] },
    required: true,
  },
  {
    base: { input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hi' }] }] },
    path: ['input', 0, 'content', 0, 'text'],
    kind: { type: 'string' },
    required: true,
  },
  ...(['call_id', 'name', 'arguments'] as const).map(
    (field): FieldSpec => ({
      base: { input: [{ type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{}' }] },
      path: ['input', 0, field],
      kind: { type: 'string' },
      required: true,
    }),
  ),
  {
    base: { input: [{ type: 'function_call_output', call_id: 'call_1', output: 'sunny' }] },
    path: ['input', 0, 'call_id'],
    kind: { type: 'string' },
    required: true,
  },
  { path: ['instructions'], kind: { type: 'string' } },
  ...samplingNumbers(),
  { path: ['max_output_tokens'], kind: { type: 'integer', min: 1 } },
  { path: ['max_tool_calls'], kind: { type: 'integer', min: 1 } },
  { path: ['top_logprobs'], kind: { type: 'integer', min: 0, max: 20 } },
  { path: ['stream'], kind: { type: 'boolean' } },
  { path: ['store'], kind: { type: 'boolean' } },
  { path: ['parallel_tool_calls'], kind: { type: 'boolean' } },
  { path: ['background'], kind: { type: 'boolean' } },
  ...(['user', 'prompt_cache_key', 'safety_identifier', 'service_tier', 'previous_response_id'] as const).map(
    (field): FieldSpec => ({ path: [field], kind: { type: 'string' } }),
  ),
  { path: ['truncation'], kind: { type: 'enum', values: ['auto', 'disabled'] } },
  { path: ['metadata'], kind: { type: 'object' } },
  {
    base: { metadata: { purpose: 'fuzz' } },
    path: ['metadata', 'purpose'],
    kind: { type: 'string', bad: ['x'.repeat(513)] },
  },
  { path: ['reasoning'], kind: { type: 'object' } },
  { base: { reasoning: { effort: 'low' } }, path: ['reasoning', 'effort'], kind: { type: 'enum', values: ['low'] } },
  {
    base: { reasoning: { summary: 'auto' } },
    path: ['reasoning', 'summary'],
    kind: { type: 'enum', values: ['auto'] },
  },
  { path: ['include'], kind: { type: 'array' } },
  { base: { include: ['reasoning.encrypted_content'] }, path: ['include', 0], kind: { type: 'string' } },
  { path: ['tools'], kind: { type: 'array' } },
  { base: { tools: [responsesTool] }, path: ['tools', 0], kind: { type: 'object' } },
  { base: { tools: [responsesTool] }, path: ['tools', 0, 'type'], kind: { type: 'string' }, required: true },
  {
    base: { tools: [responsesTool] },
    path: ['tools', 0, 'name'],
    kind: { type: 'string', nonEmpty: true },
    required: true,
  },
  { base: { tools: [responsesTool] }, path: ['tools', 0, 'parameters'], kind: { type: 'object' } },
  { base: { tools: [responsesTool] }, path: ['tools', 0, 'strict'], kind: { type: 'boolean' } },
  { base: { tools: [responsesTool] }, path: ['tool_choice'], kind: { type: 'enum', values: ['auto'] } },
  { path: ['text'], kind: { type: 'object' } },
  { base: { text: { format: { type: 'text' } } }, path: ['text', 'format'], kind: { type: 'object' } },
  {
    base: { text: { format: { type: 'text' } } },
    path: ['text', 'format', 'type'],
    kind: { type: 'enum', values: ['text'] },
  },
  {
    base: { text: { format: { type: 'json_schema', name: 'weather', schema: { type: 'object' } } } },
    path: ['text', 'format', 'name'],
    kind: { type: 'string', bad: ['', 'has space', 'x'.repeat(65)] },
    required: true,
  },
  {
    base: { text: { format: { type: 'json_schema', name: 'weather', schema: { type: 'object' } } } },
    path: ['text', 'format', 'schema'],
    kind: { type: 'object' },
    required: true,
  },
  { base: { stream: true }, path: ['stream_options'], kind: { type: 'object' } },
];

const messagesPromptFields: FieldSpec[] = [
  { path: ['model'], kind: { type: 'string', nonEmpty: true }, required: true },
  { path: ['messages'], kind: { type: 'array' }, required: true },
  { path: ['messages', 0], kind: { type: 'object' } },
  { path: ['messages', 0, 'role'], kind: { type: 'enum', values: ['user'] }, required: true },
  { path: ['messages', 0, 'content'], kind: { type: 'string-or-array' }, required: true },
  {
    base: { messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }] },
    path: ['messages', 0, 'content', 0, 'type'],
    kind: { type: 'tag' },
    required: true,
  },
  {
    base: { messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }] },
    path: ['messages', 0, 'content', 0, 'text'],
    kind: { type: 'string' },
    required: true,
  },
  { path: ['system'], kind: { type: 'string-or-array' } },
  { path: ['tools'], kind: { type: 'array' } },
  { base: { tools: [messagesTool] }, path: ['tools', 0], kind: { type: 'object' } },
  {
    base: { tools: [messagesTool] },
    path: ['tools', 0, 'name'],
    kind: { type: 'string', nonEmpty: true },
    required: true,
  },
  { base: { tools: [messagesTool] }, path: ['tools', 0, 'input_schema'], kind: { type: 'object' }, required: true },
  { base: { tools: [messagesTool] }, path: ['tools', 0, 'description'], kind: { type: 'string' } },
  { base: { tools: [messagesTool] }, path: ['tool_choice'], kind: { type: 'object' } },
  {
    base: { tools: [messagesTool], tool_choice: { type: 'auto' } },
    path: ['tool_choice', 'type'],
    kind: { type: 'enum', values: ['auto'] },
    required: true,
  },
  {
    base: { tools: [messagesTool], tool_choice: { type: 'tool', name: 'get_weather' } },
    path: ['tool_choice', 'name'],
    kind: { type: 'string' },
    required: true,
  },
  {
    base: { tools: [messagesTool], tool_choice: { type: 'auto', disable_parallel_tool_use: true } },
    path: ['tool_choice', 'disable_parallel_tool_use'],
    kind: { type: 'boolean' },
  },
  { path: ['thinking'], kind: { type: 'object' } },
  {
    base: { thinking: { type: 'enabled', budget_tokens: 1024 } },
    path: ['thinking', 'budget_tokens'],
    kind: { type: 'integer', min: 1, max: Number.MAX_SAFE_INTEGER },
    required: true,
  },
  { path: ['metadata'], kind: { type: 'object' } },
  { base: { metadata: { user_id: 'u1' } }, path: ['metadata', 'user_id'], kind: { type: 'string' } },
];

const messagesFields: FieldSpec[] = [
  ...messagesPromptFields,
  { path: ['max_tokens'], kind: { type: 'integer', min: 0, max: Number.MAX_SAFE_INTEGER }, required: true },
  { path: ['stop_sequences'], kind: { type: 'array' } },
  { base: { stop_sequences: ['END'] }, path: ['stop_sequences', 0], kind: { type: 'string' } },
  { path: ['temperature'], kind: { type: 'number', min: 0, max: 1 } },
  { path: ['top_p'], kind: { type: 'number', min: 0, max: 1 } },
  { path: ['top_k'], kind: { type: 'integer', min: 0, max: Number.MAX_SAFE_INTEGER } },
  { path: ['stream'], kind: { type: 'boolean' } },
  { path: ['service_tier'], kind: { type: 'string' } },
];

const embeddingsFields: FieldSpec[] = [
  { path: ['model'], kind: { type: 'string', nonEmpty: true }, required: true },
  { path: ['input'], kind: { type: 'string-or-array', nonEmpty: true }, required: true },
  { base: { input: ['a', 'b'] }, path: ['input', 1], kind: { type: 'string', nonEmpty: true } },
  { path: ['encoding_format'], kind: { type: 'enum', values: ['float', 'base64'] } },
  { path: ['dimensions'], kind: { type: 'integer', min: 1, max: Number.MAX_SAFE_INTEGER } },
  { path: ['user'], kind: { type: 'string' } },
];

const completionsFields: FieldSpec[] = [
  { path: ['model'], kind: { type: 'string', nonEmpty: true }, required: true },
  { path: ['prompt'], kind: { type: 'string-or-array' }, required: true },
  { path: ['suffix'], kind: { type: 'string' } },
  { path: ['max_tokens'], kind: { type: 'integer', min: 0, max: Number.MAX_SAFE_INTEGER } },
  ...samplingNumbers(),
  { path: ['n'], kind: { type: 'integer', min: 1, max: 128 } },
  { base: { n: 1 }, path: ['best_of'], kind: { type: 'integer', min: 1, max: 20 } },
  { path: ['logprobs'], kind: { type: 'integer', min: 0, max: 5 } },
  { path: ['echo'], kind: { type: 'boolean' } },
  { path: ['stream'], kind: { type: 'boolean' } },
  { base: { stream: true }, path: ['stream_options'], kind: { type: 'object' } },
  {
    base: { stream: true, stream_options: { include_usage: true } },
    path: ['stream_options', 'include_usage'],
    kind: { type: 'boolean' },
  },
  { path: ['stop'], kind: { type: 'string-or-array' } },
  { base: { stop: ['a'] }, path: ['stop', 0], kind: { type: 'string' } },
  { path: ['seed'], kind: { type: 'integer', min: Number.MIN_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER } },
  { path: ['user'], kind: { type: 'string' } },
];

interface EndpointCase {
  path: string;
  surface: Surface;
  /** The smallest valid request (its model replaced per provider). */
  minimal: Record<string, unknown>;
  /** One model per provider type the endpoint reaches. */
  models: string[];
  fields: FieldSpec[];
}

const chatModels = ['gpt-4o-mini', 'claude-mock', 'gemini-mock'];
const endpointCases: EndpointCase[] = [
  {
    path: '/v1/chat/completions',
    surface: 'openai',
    minimal: { model: 'x', messages: user },
    models: chatModels,
    fields: chatFields,
  },
  {
    path: '/v1/responses',
    surface: 'openai',
    minimal: { model: 'x', input: 'hi', store: false },
    models: chatModels,
    fields: responsesFields,
  },
  {
    path: '/v1/messages',
    surface: 'anthropic',
    minimal: { model: 'x', max_tokens: 16, messages: user },
    models: chatModels,
    fields: messagesFields,
  },
  {
    path: '/v1/messages/count_tokens',
    surface: 'anthropic',
    minimal: { model: 'x', messages: user },
    models: chatModels,
    fields: messagesPromptFields,
  },
  {
    path: '/v1/embeddings',
    surface: 'openai',
    minimal: { model: 'x', input: 'hi' },
    models: ['embed-openai', 'embed-gemini'],
    fields: embeddingsFields,
  },
  {
    path: '/v1/completions',
    surface: 'openai',
    minimal: { model: 'x', prompt: 'hi' },
    models: ['gpt-4o-mini'],
    fields: completionsFields,
  },
];

/** A case: one field of a valid request made wrong, for one provider's model. */
function oneFieldWrong(endpoint: EndpointCase) {
  const cases = endpoint.fields.flatMap((spec) =>
    badValues(spec.kind, spec.required === true).map((value) => ({ spec, value })),
  );
  return fc.record({ wrong: fc.constantFrom(...cases), model: fc.constantFrom(...endpoint.models) });
}

describe.each(endpointCases)('generated one-field-wrong input on $path', (endpoint) => {
  it('is a 400 naming the field, decided without calling upstream, and logged as answered', async () => {
    await fc.assert(
      fc.asyncProperty(oneFieldWrong(endpoint), async ({ wrong, model }) => {
        const valid = { ...endpoint.minimal, model, ...(wrong.spec.base ?? {}) };
        const body = serialize(withField(valid, wrong.spec.path, wrong.value));
        const { answer, calls } = await exchange(endpoint.path, endpoint.surface, body);
        const context = `${endpoint.path} ${body.slice(0, 400)} -> ${answer.status} ${answer.text.slice(0, 400)}`;
        expect(answer.status, context).toBe(400);
        // The field itself, or a member of it (an empty object misses its first required member).
        const expected = wrong.spec.param ?? fieldName(wrong.spec.path, endpoint.surface);
        const named = namedField(answer, endpoint.surface) ?? '';
        // Anthropic names the block whose discriminator is missing ("messages.0.content.0: Unable to extract tag
        // using discriminator 'type'"), as its own API does.
        const discriminated = endpoint.surface === 'anthropic' && wrong.spec.path.at(-1) === 'type';
        const parent = fieldName(wrong.spec.path.slice(0, -1), endpoint.surface);
        expect(
          named === expected ||
            named.startsWith(`${expected}.`) ||
            named.startsWith(`${expected}[`) ||
            (discriminated && named === parent),
          context,
        ).toBe(true);
        expect(calls, context).toBe(0);
        answered.set(answer.requestId, answer.status);
      }),
      { seed, numRuns: runs(200) },
    );
    await expectLoggedAsAnswered();
  });
});

// ---------------------------------------------------------------------------------------------------------------------
// Valid requests mutated anywhere, the same body sent through every provider type.

const longText = 'ü'.repeat(20_000);
const deep = (levels: number): unknown => (levels === 0 ? 'bottom' : { a: deep(levels - 1) });
const strangeValues: readonly unknown[] = [
  null,
  '',
  -1,
  0,
  0.5,
  1e308,
  -1e308,
  2 ** 53 + 2,
  '__raw_huge__',
  '__raw_minus_huge__',
  longText,
  '\ud800 lone surrogate',
  '\u0000',
  [],
  {},
  [[]],
  deep(40),
  true,
];

const mutation: fc.Arbitrary<Mutation> = fc.record({
  kind: fc.constantFrom('replace', 'replace', 'delete', 'add'),
  at: fc.nat(),
  value: fc.oneof(fc.constantFrom(...strangeValues), fc.jsonValue({ maxDepth: 3 })),
});

const weatherSchema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };
const fullRequests: Record<string, Record<string, unknown>[]> = {
  '/v1/chat/completions': [
    {
      model: 'x',
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: [{ type: 'text', text: 'weather?' }] },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"P"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_1', content: 'sunny' },
      ],
      tools: [{ type: 'function', function: { name: 'get_weather', parameters: weatherSchema } }],
      tool_choice: 'auto',
      temperature: 0.5,
      max_tokens: 20,
      stop: ['END'],
      stream: false,
    },
    {
      model: 'x',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
      stream_options: { include_usage: true },
      response_format: { type: 'json_schema', json_schema: { name: 'weather', schema: weatherSchema } },
    },
  ],
  '/v1/responses': [
    {
      model: 'x',
      input: [
        { type: 'message', role: 'developer', content: 'be brief' },
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'weather?' }] },
        { type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"P"}' },
        { type: 'function_call_output', call_id: 'call_1', output: 'sunny' },
      ],
      tools: [{ type: 'function', name: 'get_weather', parameters: weatherSchema }],
      tool_choice: 'auto',
      store: false,
      max_output_tokens: 50,
      reasoning: { summary: 'auto' },
      include: ['reasoning.encrypted_content'],
    },
    {
      model: 'x',
      input: [{ type: 'message', id: 'msg_1', role: 'user', content: [{ type: 'input_text', text: 'hi' }] }],
      instructions: 'be brief',
      store: true,
      metadata: { purpose: 'fuzz' },
    },
    {
      model: 'x',
      input: 'hi',
      instructions: 'be brief',
      stream: true,
      store: false,
      text: { format: { type: 'json_schema', name: 'weather', schema: weatherSchema, strict: true } },
    },
  ],
  '/v1/messages': [
    {
      model: 'x',
      max_tokens: 50,
      system: [{ type: 'text', text: 'be brief' }],
      messages: [
        { role: 'user', content: 'weather?' },
        {
          role: 'assistant',
          content: [{ type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'P' } }],
        },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'sunny' }] },
      ],
      tools: [{ name: 'get_weather', input_schema: weatherSchema }],
      tool_choice: { type: 'auto' },
      temperature: 0.5,
    },
    { model: 'x', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }], stream: true, stop_sequences: ['END'] },
    {
      model: 'x',
      max_tokens: 50,
      system: 'be brief',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'what is this?' },
            { type: 'image', source: { type: 'url', url: 'https://example.com/cat.png' } },
          ],
        },
      ],
    },
  ],
  '/v1/messages/count_tokens': [
    {
      model: 'x',
      system: 'be brief',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
      tools: [{ name: 'get_weather', input_schema: weatherSchema }],
    },
  ],
  '/v1/embeddings': [
    { model: 'x', input: ['hello', 'world'], encoding_format: 'float' },
    { model: 'x', input: 'hello', encoding_format: 'base64', dimensions: 3 },
  ],
  '/v1/completions': [
    { model: 'x', prompt: 'Say', max_tokens: 5, stop: ['\n'], echo: false },
    { model: 'x', prompt: ['a', 'b'], stream: true, stream_options: { include_usage: true } },
  ],
};

/** OpenAI codes of the gateway's own validation (the same whichever provider serves the model). */
const validationCodes = new Set([
  'invalid_type',
  'invalid_value',
  'missing_required_parameter',
  'empty_array',
  'integer_above_max_value',
  'integer_below_min_value',
  'decimal_above_max_value',
  'decimal_below_min_value',
  'array_above_max_length',
  'string_above_max_length',
  'object_above_max_properties',
  'invalid_encoding',
]);
/** Anthropic's wording of the same checks (field-checks.ts). */
const anthropicValidation = /^(Field required|Input should|Unable to extract|String should|List should)/;

function isValidationError(answer: Answer, surface: Surface): boolean {
  if (answer.status !== 400 || !answer.error) return false;
  if (surface === 'openai') {
    return validationCodes.has(answer.error.code) || /^We could not parse the JSON body/.test(answer.error.message);
  }
  return anthropicValidation.test(answer.error.message.replace(/^[\w.]+: /, ''));
}

describe.each(endpointCases)('generated mutations of valid requests on $path, through every provider', (endpoint) => {
  it('answers validly or with a 4xx naming a field of the request, alike for every provider', async () => {
    const documents = fullRequests[endpoint.path] ?? [];
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...documents), mutation, async (document, change) => {
        const mutated = mutate(document, change) as Record<string, unknown>;
        const touchedModel = mutated.model !== 'x';
        const models = touchedModel ? [endpoint.models[0] as string] : endpoint.models;
        const seen: { model: string; answer: Answer; calls: number }[] = [];
        for (const model of models) {
          const request = touchedModel ? mutated : { ...mutated, model };
          const body = serialize(request);
          const { answer, calls } = await exchange(endpoint.path, endpoint.surface, body);
          const context = `${endpoint.path} ${body.slice(0, 500)} -> ${answer.status} ${answer.text.slice(0, 500)}`;
          answered.set(answer.requestId, answer.status);
          if (answer.status < 300) {
            expectValidSuccess(endpoint.path, answer, context);
            // What was left out (a sampling hint the model cannot take) was in the request: never invented.
            for (const name of answer.dropped) {
              expect(Object.hasOwn(request, name.split('.')[0] as string), `${context} dropped ${name}`).toBe(true);
            }
          } else {
            const named = namedField(answer, endpoint.surface);
            const refusedAsUnsupported = answer.status === 400 && /^unsupported_/.test(answer.error?.code ?? '');
            if (named !== null) expect(pointsInto(request, named, refusedAsUnsupported), context).toBe(true);
            // The translated chat request is the gateway's own: its paths mean nothing to a Messages client.
            if (endpoint.surface === 'anthropic') expect(namesChatPath(answer), context).toBe(false);
            // What the gateway refuses on its own reaches no upstream.
            if (isValidationError(answer, endpoint.surface)) expect(calls, context).toBe(0);
          }
          seen.push({ model, answer, calls });
        }
        // What the gateway decides from the request alone (before it looks at the model: the same 400 for a model
        // that does not exist) it decides alike for every provider.
        if (!touchedModel) {
          const probe = await exchange(
            endpoint.path,
            endpoint.surface,
            serialize({ ...mutated, model: 'no-such-model' }),
          );
          answered.set(probe.answer.requestId, probe.answer.status);
          if (probe.answer.status === 400) {
            expect(probe.calls).toBe(0);
            for (const { model, answer, calls } of seen) {
              expect(
                [model, answer.status, answer.error?.message, calls],
                JSON.stringify(mutated).slice(0, 500),
              ).toEqual([model, 400, probe.answer.error?.message, 0]);
            }
          }
        }
        expect((await fetch(`${setup.gateway.url}/healthz`)).status).toBe(200);
      }),
      { seed, numRuns: runs(60) },
    );
    await expectLoggedAsAnswered();
  });
});
