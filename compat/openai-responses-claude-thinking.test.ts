import OpenAI from 'openai';
import { beforeAll, describe, expect, it } from 'vitest';
import { useGatewayWithMock } from '../test/support/gateway-fixture.js';
import { sendJson } from '../test/support/mock-server.js';

/**
 * The official `openai` npm SDK's `responses.create` driving a Claude tool loop with reasoning, through the Responses
 * translation, as Codex does it: `store: false`, `include: ["reasoning.encrypted_content"]`, the whole history sent
 * each turn with the items the previous answer gave (reasoning items included). Claude's signed thinking comes back
 * in the reasoning item's `encrypted_content` and goes back first in the Anthropic turn, so thinking stays on for the
 * tool result; the mock refuses, as Anthropic does, a tool loop with thinking on whose turn does not start with it.
 * The same through `previous_response_id` (stored). Reasoning items holding it are left out for a native OpenAI
 * upstream (which would refuse them) and for a chat upstream that is not Anthropic.
 */

const nativeAnswer = {
  id: 'resp_native1',
  object: 'response',
  created_at: 1760000000,
  status: 'completed',
  model: 'native-upstream',
  output: [
    {
      id: 'msg_n1',
      type: 'message',
      status: 'completed',
      role: 'assistant',
      content: [{ type: 'output_text', text: 'Native.', annotations: [] }],
    },
  ],
  usage: { input_tokens: 10, output_tokens: 2, total_tokens: 12 },
};

const setup = useGatewayWithMock({
  providerMocks: ['thinking-tools'],
  upstreamHandlers: {
    'native-upstream': (_request, response) => sendJson(response, 200, nativeAnswer),
    'chat-upstream': (_request, response) =>
      sendJson(response, 200, {
        id: 'chatcmpl-1',
        object: 'chat.completion',
        created: 1760000000,
        model: 'chat-upstream',
        choices: [{ index: 0, message: { role: 'assistant', content: 'Chat.' }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 },
      }),
  },
  models: [
    { name: 'native-model', provider: 'mock', upstream_model: 'native-upstream', responses_api: 'native' },
    { name: 'chat-model', provider: 'mock', upstream_model: 'chat-upstream' },
  ],
});

let client: OpenAI;

beforeAll(() => {
  client = new OpenAI({ baseURL: setup.gateway.baseUrl, apiKey: setup.gateway.key, maxRetries: 0 });
});

const model = 'claude-thinking-tools';
const tools: OpenAI.Responses.Tool[] = [
  {
    type: 'function',
    name: 'get_weather',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    strict: false,
  },
];
const question: OpenAI.Responses.ResponseInputItem[] = [{ role: 'user', content: 'Weather in Paris?' }];
const codexSettings = {
  model,
  tools,
  reasoning: { effort: 'low' as const, summary: 'auto' as const },
  include: ['reasoning.encrypted_content' as const],
  store: false,
};

type OutputItem = OpenAI.Responses.ResponseOutputItem;

/** One turn: the output items (from `response.output_item.done` when streamed, as Codex reads them) and the header. */
async function turn(
  body: Omit<OpenAI.Responses.ResponseCreateParamsNonStreaming, 'stream'>,
  stream: boolean,
): Promise<{ output: OutputItem[]; dropped: string | null; events: string[]; id: string }> {
  if (!stream) {
    const { data, response } = await client.responses.create({ ...body, stream: false }).withResponse();
    return {
      output: data.output,
      dropped: response.headers.get('x-switchboard-dropped-parameters'),
      events: [],
      id: data.id,
    };
  }
  const { data: events, response } = await client.responses.create({ ...body, stream: true }).withResponse();
  const output: OutputItem[] = [];
  const types: string[] = [];
  let id = '';
  for await (const event of events) {
    types.push(event.type);
    if (event.type === 'response.output_item.done') output.push(event.item);
    if (event.type === 'response.completed') id = event.response.id;
  }
  return { output, dropped: response.headers.get('x-switchboard-dropped-parameters'), events: types, id };
}

/** The Anthropic request of the last upstream call. */
const lastUpstream = () => setup.providerMocks.anthropic.requests.at(-1);

function expectThinkingCarried() {
  const upstream = lastUpstream();
  expect(upstream?.body.thinking).toEqual({ type: 'enabled', budget_tokens: 1024 });
  const assistant = upstream?.body.messages[1];
  expect(assistant.role).toBe('assistant');
  expect(assistant.content.map((block: { type: string }) => block.type)).toEqual([
    'thinking',
    'redacted_thinking',
    'text',
    'tool_use',
  ]);
  expect(assistant.content[0].thinking).toBe('I should ask the weather tool, "quoted" \u00e9.');
}

describe('openai npm SDK responses.create: a Claude tool loop keeps its signed thinking', () => {
  it.each([false, true])('with store: false and include, resending the history (stream: %s)', async (stream) => {
    const first = await turn({ ...codexSettings, input: question }, stream);
    expect(lastUpstream()?.body.thinking).toEqual({ type: 'enabled', budget_tokens: 1024 });
    const reasoning = first.output[0] as OpenAI.Responses.ResponseReasoningItem;
    expect(reasoning.type).toBe('reasoning');
    expect(reasoning.summary).toEqual([
      { type: 'summary_text', text: 'I should ask the weather tool, "quoted" \u00e9.' },
    ]);
    expect(reasoning.encrypted_content).toMatch(/^sb-thinking-v1\./);
    const call = first.output.find(
      (item) => item.type === 'function_call',
    ) as OpenAI.Responses.ResponseFunctionToolCall;
    expect(call.name).toBe('get_weather');
    if (stream) {
      const reasoningEvents = first.events.slice(first.events.indexOf('response.output_item.added'));
      expect(reasoningEvents.slice(0, 4)).toEqual([
        'response.output_item.added',
        'response.reasoning_summary_part.added',
        'response.reasoning_summary_text.delta',
        'response.reasoning_summary_text.delta',
      ]);
    }

    const history: OpenAI.Responses.ResponseInputItem[] = [
      ...question,
      ...(first.output as OpenAI.Responses.ResponseInputItem[]),
      { type: 'function_call_output', call_id: call.call_id, output: '18 C' },
    ];
    const second = await turn({ ...codexSettings, input: history }, stream);
    const message = second.output.find((item) => item.type === 'message') as OpenAI.Responses.ResponseOutputMessage;
    expect(message.content[0]).toMatchObject({ type: 'output_text', text: 'The weather: 18 C' });
    expectThinkingCarried();
    expect(second.dropped ?? '').not.toMatch(/reasoning[._]effort|encrypted_content/);
  });

  it('without the encrypted content, answers the tool result without thinking and says so', async () => {
    const { include: _include, ...settings } = codexSettings;
    const first = await turn({ ...settings, input: question }, false);
    expect(first.output[0]).not.toHaveProperty('encrypted_content');
    const call = first.output.find(
      (item) => item.type === 'function_call',
    ) as OpenAI.Responses.ResponseFunctionToolCall;
    const second = await turn(
      {
        ...settings,
        input: [
          ...question,
          ...(first.output as OpenAI.Responses.ResponseInputItem[]),
          { type: 'function_call_output', call_id: call.call_id, output: '18 C' },
        ],
      },
      false,
    );
    expect(second.dropped?.split(', ')).toContain('reasoning.effort');
    expect(lastUpstream()?.body.thinking).toBeUndefined();
  });

  it.each([false, true])('through previous_response_id, the stored reasoning replayed (stream: %s)', async (stream) => {
    const { include: _include, store: _store, ...settings } = codexSettings;
    const first = await turn({ ...settings, input: question }, stream);
    // Stored: the reasoning keeps its signed thinking, so that the conversation can go on.
    expect((first.output[0] as OpenAI.Responses.ResponseReasoningItem).encrypted_content).toMatch(/^sb-thinking-v1\./);
    const call = first.output.find(
      (item) => item.type === 'function_call',
    ) as OpenAI.Responses.ResponseFunctionToolCall;
    const second = await turn(
      {
        ...settings,
        previous_response_id: first.id,
        input: [{ type: 'function_call_output', call_id: call.call_id, output: '18 C' }],
      },
      stream,
    );
    const message = second.output.find((item) => item.type === 'message') as OpenAI.Responses.ResponseOutputMessage;
    expect(message.content[0]).toMatchObject({ type: 'output_text', text: 'The weather: 18 C' });
    expectThinkingCarried();
  });
});

describe("Claude's reasoning items sent to other models", () => {
  async function claudeHistory(): Promise<OpenAI.Responses.ResponseInputItem[]> {
    const first = await turn({ ...codexSettings, input: question }, false);
    const call = first.output.find(
      (item) => item.type === 'function_call',
    ) as OpenAI.Responses.ResponseFunctionToolCall;
    return [
      ...question,
      ...(first.output as OpenAI.Responses.ResponseInputItem[]),
      { type: 'function_call_output', call_id: call.call_id, output: '18 C' },
    ];
  }

  it('are left out for a native OpenAI upstream, whose own reasoning items pass untouched', async () => {
    const openAiReasoning = { type: 'reasoning' as const, id: 'rs_openai', summary: [], encrypted_content: 'gAAAA-x' };
    const history = [openAiReasoning, ...(await claudeHistory())];
    const { data, response } = await client.responses
      .create({ ...codexSettings, model: 'native-model', input: history })
      .withResponse();
    expect(data.output[0]).toMatchObject({ type: 'message' });
    expect(response.headers.get('x-switchboard-dropped-parameters')).toBe('input.reasoning.encrypted_content');
    const upstream = setup.mock.requests.at(-1)?.body as { input: Array<Record<string, unknown>> };
    const reasoningItems = upstream.input.filter((item) => item.type === 'reasoning');
    expect(reasoningItems).toEqual([openAiReasoning]);
    expect(upstream.input.map((item) => item.type ?? item.role)).toEqual([
      'reasoning',
      'user',
      'message',
      'function_call',
      'function_call_output',
    ]);
  });

  it('are left out, named, for a chat upstream that is not Anthropic', async () => {
    const history = await claudeHistory();
    const { data, response } = await client.responses
      .create({ ...codexSettings, model: 'chat-model', input: history })
      .withResponse();
    expect(data.output.at(-1)).toMatchObject({ type: 'message' });
    const dropped = response.headers.get('x-switchboard-dropped-parameters')?.split(', ') ?? [];
    expect(dropped).toContain('input.reasoning.encrypted_content');
    expect(dropped).toContain('include.reasoning.encrypted_content');
    const upstream = setup.mock.requests.at(-1)?.body as { messages: Array<Record<string, unknown>> };
    expect(upstream.messages.some((message) => 'thinking_blocks' in message)).toBe(false);
  });
});
