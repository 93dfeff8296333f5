import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { accumulate, parseEvents } from './support/anthropic-events.js';
import { jsonOf, waitForLogRows } from './support/gateway.js';
import { useGatewayWithMock } from './support/gateway-fixture.js';
import { tinyPromptTokens, writeTinyGguf } from './support/tiny-gguf.js';

/**
 * /v1/messages and count_tokens served by the built-in local model (a generated tiny GGUF, one token per character):
 * the request translated to the model's chat template and answered in Anthropic's shape, and count_tokens answered by
 * the model's own tokenizer, equal to what the model is really given.
 */

let directory: string;

// Registered before the fixture, so it runs after the gateway closed (afterAll hooks run in reverse).
afterAll(() => {
  rmSync(directory, { recursive: true, force: true });
});

const setup = useGatewayWithMock(() => {
  directory = mkdtempSync(path.join(tmpdir(), 'switchboard-messages-local-'));
  const file = path.join(directory, 'tiny.gguf');
  writeTinyGguf(file);
  return {
    providers: [{ name: 'tiny', type: 'local', model_path: file, max_concurrent: 1, context_size: 256, threads: 1 }],
    models: [{ name: 'tiny-chat', provider: 'tiny', pricing: { input: 1, output: 2 } }],
  };
});

function post(pathname: string, body: Record<string, unknown>) {
  return fetch(`${setup.gateway.url}${pathname}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${setup.gateway.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'tiny-chat', ...body }),
  });
}

const prompt = { system: 'Be brief.', messages: [{ role: 'user', content: 'Hi there' }] };
const promptTokens = tinyPromptTokens([
  { role: 'system', content: 'Be brief.' },
  { role: 'user', content: 'Hi there' },
]);

describe('the local model on the Messages surface', () => {
  it('counts tokens with the model’s own tokenizer and template', async () => {
    const response = await post('/v1/messages/count_tokens', prompt);
    expect(response.status).toBe(200);
    expect(await jsonOf(response)).toEqual({ input_tokens: promptTokens });
    const [row] = await waitForLogRows(setup.gateway, [response.headers.get('x-request-id') as string]);
    expect(row).toMatchObject({ endpoint: 'count_tokens', status: 200 });
  });

  it('answers a message whose input_tokens equal that count, cut at max_tokens', async () => {
    const response = await post('/v1/messages', { ...prompt, max_tokens: 5 });
    expect(response.status).toBe(200);
    const message = await jsonOf(response);
    expect(message).toMatchObject({ type: 'message', role: 'assistant', stop_reason: 'max_tokens' });
    expect(message.content).toHaveLength(1);
    expect(message.content[0].type).toBe('text');
    expect(message.usage).toEqual({
      input_tokens: promptTokens,
      output_tokens: 5,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
    });
  });

  it('says which stop sequence ended the answer, whole and streamed', async () => {
    const free = await jsonOf(await post('/v1/messages', { ...prompt, max_tokens: 12, temperature: 0 }));
    const text: string = free.content[0].text;
    // A piece of what the model writes at temperature 0, as a stop sequence: the answer ends where it first appears.
    const sequence = text.slice(6, 9);
    const before = text.slice(0, text.indexOf(sequence));
    const stopped = { ...prompt, max_tokens: 12, temperature: 0, stop_sequences: ['never-written', sequence] };
    const message = await jsonOf(await post('/v1/messages', stopped));
    expect(message).toMatchObject({ stop_reason: 'stop_sequence', stop_sequence: sequence });
    expect(message.content).toEqual([{ type: 'text', text: before }]);
    const streamed = accumulate(parseEvents(await (await post('/v1/messages', { ...stopped, stream: true })).text()));
    expect([streamed.stopReason, streamed.stopSequence]).toEqual(['stop_sequence', sequence]);
    // Without a sequence it ends on max_tokens, as before: stop_sequence stays null.
    expect([free.stop_reason, free.stop_sequence]).toEqual(['max_tokens', null]);
  });

  it('streams Anthropic’s events', async () => {
    const response = await post('/v1/messages', { ...prompt, max_tokens: 4, stream: true });
    const message = accumulate(parseEvents(await response.text()));
    expect(message.stopReason).toBe('max_tokens');
    expect(message.usage.output_tokens).toBe(4);
    expect(message.content[0]?.type).toBe('text');
  });
});
