import { describe, expect, it } from 'vitest';
import { encodeThinking, type ThinkingBlock } from '../../src/api/v1/responses/reasoning-envelope.js';
import { reasoningHistoryFor } from '../../src/api/v1/responses/reasoning-history.js';
import { toChatRequest } from '../../src/api/v1/responses/to-chat-request.js';
import { validateResponsesRequest } from '../../src/api/v1/responses/validate-request.js';

const signedBlocks: ThinkingBlock[] = [{ type: 'thinking', thinking: 'Claude thought.', signature: 'c2ln' }];

/** A tool-call turn with reasoning, as a Codex-style client (store: false) sends its history back. */
function translate(reasoning: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  const request = validateResponsesRequest({
    model: 'm',
    input: [
      { role: 'user', content: 'Weather?' },
      { type: 'reasoning', id: 'rs_1', ...reasoning },
      { type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{}' },
      { type: 'function_call_output', call_id: 'call_1', output: '18 C' },
    ],
    ...extra,
  });
  return { request, translation: toChatRequest(request, []) };
}

const unsigned = { summary: [{ type: 'summary_text', text: 'DeepSeek thought.' }] };
const signed = {
  summary: [{ type: 'summary_text', text: 'Claude thought.' }],
  encrypted_content: encodeThinking(signedBlocks),
};

describe('reasoning brought back in the history, per provider', () => {
  it('gives an OpenAI-compatible server the text as reasoning_content (DeepSeek requires it after a tool call)', () => {
    const { request, translation } = translate(unsigned);
    const settled = reasoningHistoryFor('openai', translation, request);
    expect(settled.request.messages[1]).toEqual({
      role: 'assistant',
      content: null,
      reasoning_content: 'DeepSeek thought.',
      tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{}' } }],
    });
    expect(settled.dropped).toEqual([]);
  });

  it("gives it Claude's thinking as text, never the signed blocks, and names the signature as left out", () => {
    const { request, translation } = translate(signed);
    const settled = reasoningHistoryFor('openai', translation, request);
    expect(settled.request.messages[1]).not.toHaveProperty('thinking_blocks');
    expect(settled.request.messages[1]?.reasoning_content).toBe('Claude thought.');
    expect(settled.dropped).toEqual(['input.reasoning.encrypted_content']);
    // The translation shared by the model's other deployments is not changed.
    expect(translation.request.messages[1]?.thinking_blocks).toEqual(signedBlocks);
  });

  it('gives Anthropic the signed blocks, and names unsigned reasoning as left out', () => {
    const fromClaude = translate(signed);
    const settledSigned = reasoningHistoryFor('anthropic', fromClaude.translation, fromClaude.request);
    expect(settledSigned.request.messages[1]?.thinking_blocks).toEqual(signedBlocks);
    expect(settledSigned.dropped).toEqual([]);
    const fromOther = translate(unsigned);
    expect(reasoningHistoryFor('anthropic', fromOther.translation, fromOther.request).dropped).toEqual([
      'input.reasoning',
    ]);
  });

  it('leaves reasoning out for Gemini and the built-in model, naming it', () => {
    for (const provider of ['gemini', 'local'] as const) {
      for (const reasoning of [unsigned, signed]) {
        const { request, translation } = translate(reasoning);
        const settled = reasoningHistoryFor(provider, translation, request);
        expect(settled.request.messages[1]).not.toHaveProperty('reasoning_content');
        expect(settled.request.messages[1]).not.toHaveProperty('thinking_blocks');
        expect(settled.dropped).toContain('input.reasoning');
      }
    }
  });

  it('names include.reasoning.encrypted_content as left out for every provider but Anthropic', () => {
    const { request, translation } = translate(unsigned, { include: ['reasoning.encrypted_content'] });
    expect(reasoningHistoryFor('openai', translation, request).dropped).toEqual([
      'include.reasoning.encrypted_content',
    ]);
    expect(reasoningHistoryFor('anthropic', translation, request).dropped).toEqual(['input.reasoning']);
  });
});
