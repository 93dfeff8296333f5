import type { ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { jsonOf } from './support/gateway.js';
import { useGatewayWithMock } from './support/gateway-fixture.js';
import type { RecordedRequest } from './support/mock-openai-upstream.js';
import { parseEvents, postResponses } from './support/responses.js';

/**
 * A reasoning model behind an OpenAI-compatible server that, like DeepSeek's thinking mode, answers a tool call with
 * `reasoning_content` and refuses the next request (400) unless that reasoning comes back on the assistant message
 * with the tool calls: through /v1/responses a conversation with it must keep working, continued by
 * `previous_response_id` or sent whole each turn (`store: false`, as Codex does).
 */

const thought = 'The user wants the weather; call the tool.';
const seen: Record<string, unknown>[] = [];

/** The completion as one chunk of a stream (the gateway reads a whole message from a single delta too). */
function streamed(response: ServerResponse, body: Completion) {
  const [choice] = body.choices;
  const chunk = (delta: unknown, finishReason: string | null, usage?: unknown) =>
    `data: ${JSON.stringify({ ...body, object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finishReason }], ...(usage ? { usage } : {}) })}\n\n`;
  const { tool_calls: calls, ...message }: Record<string, unknown> = choice?.message ?? {};
  const delta = calls
    ? { ...message, tool_calls: (calls as object[]).map((call, index) => ({ index, ...call })) }
    : message;
  response.writeHead(200, { 'content-type': 'text/event-stream' });
  const finish = chunk({}, choice?.finish_reason ?? 'stop', body.usage);
  response.end(`${chunk(delta, null)}${finish}data: [DONE]\n\n`);
}

function answer(response: ServerResponse, status: number, body: unknown) {
  const text = JSON.stringify(body);
  response.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  response.end(text);
}

interface Completion {
  choices: { index: number; message: Record<string, unknown>; finish_reason: string }[];
  usage: unknown;
  [field: string]: unknown;
}

function completion(message: Record<string, unknown>, finishReason: string): Completion {
  return {
    id: 'chatcmpl-thinking',
    object: 'chat.completion',
    created: 1,
    model: 'thinking-upstream',
    choices: [{ index: 0, message: { role: 'assistant', ...message }, finish_reason: finishReason }],
    usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
  };
}

function thinkingUpstream(request: RecordedRequest, response: ServerResponse) {
  seen.push(request.body);
  const messages = request.body.messages as Record<string, unknown>[];
  const calling = messages.find((message) => message.role === 'assistant' && message.tool_calls !== undefined);
  if (!calling) {
    const call = { id: 'call_w1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } };
    const body = completion({ content: null, reasoning_content: thought, tool_calls: [call] }, 'tool_calls');
    if (request.body.stream === true) streamed(response, body);
    else answer(response, 200, body);
    return;
  }
  if (calling.reasoning_content !== thought) {
    answer(response, 400, {
      error: {
        message: 'The `reasoning_content` in the thinking mode must be passed back to the API.',
        type: 'invalid_request_error',
        param: null,
        code: 'invalid_request_error',
      },
    });
    return;
  }
  const body = completion({ content: 'Sunny in Paris.', reasoning_content: 'Now answer.' }, 'stop');
  if (request.body.stream === true) streamed(response, body);
  else answer(response, 200, body);
}

const setup = useGatewayWithMock({
  upstreamHandlers: { 'thinking-upstream': thinkingUpstream },
  models: [{ name: 'thinking-model', provider: 'mock', upstream_model: 'thinking-upstream' }],
});

const tools = [
  { type: 'function', name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
];

describe('/v1/responses: reasoning brought back to an OpenAI-compatible reasoning model', () => {
  it('keeps a tool-call conversation going through previous_response_id', async () => {
    const first = await jsonOf(
      await postResponses(setup.gateway, { model: 'thinking-model', input: 'Weather in Paris?', tools }),
    );
    expect(first.output.map((item: { type: string }) => item.type)).toEqual(['reasoning', 'function_call']);
    const call = first.output[1];
    const second = await postResponses(setup.gateway, {
      model: 'thinking-model',
      previous_response_id: first.id,
      input: [{ type: 'function_call_output', call_id: call.call_id, output: '18 C, sunny' }],
      tools,
    });
    const body = await jsonOf(second);
    expect(second.status).toBe(200);
    expect(body.output.at(-1).content[0].text).toBe('Sunny in Paris.');
    expect(second.headers.get('x-switchboard-dropped-parameters')).toBeNull();
  });

  it('keeps it going when the client sends the whole history each turn (store: false, streamed, as Codex does)', async () => {
    const firstResponse = await postResponses(setup.gateway, {
      model: 'thinking-model',
      input: [{ role: 'user', content: 'Weather in Paris?' }],
      tools,
      store: false,
      stream: true,
      reasoning: { effort: 'medium' },
    });
    const events = parseEvents(await firstResponse.text());
    const completed = events.find(({ data }) => data.type === 'response.completed')?.data.response;
    expect(completed.output.map((item: { type: string }) => item.type)).toEqual(['reasoning', 'function_call']);
    const [reasoning, call] = completed.output;
    const second = await postResponses(setup.gateway, {
      model: 'thinking-model',
      input: [
        { role: 'user', content: 'Weather in Paris?' },
        reasoning,
        call,
        { type: 'function_call_output', call_id: call.call_id, output: '18 C, sunny' },
      ],
      tools,
      store: false,
      stream: true,
    });
    expect(second.status).toBe(200);
    const last = parseEvents(await second.text())
      .filter(({ data }) => data !== '[DONE]')
      .at(-1)?.data;
    expect(last.type).toBe('response.completed');
    expect(last.response.output.at(-1).content[0].text).toBe('Sunny in Paris.');
    const sent = seen.at(-1)?.messages as Record<string, unknown>[];
    expect(sent.find((message) => message.role === 'assistant')?.reasoning_content).toBe(thought);
  });
});
