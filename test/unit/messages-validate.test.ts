import { describe, expect, it } from 'vitest';
import { validateCountTokensRequest, validateMessagesRequest } from '../../src/api/v1/messages/validate-request.js';
import { apiErrorOf } from '../support/api-error.js';
import { messagesFixture } from '../support/messages-fixtures.js';

const minimal = () => ({ model: 'm', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] });

/** The 400 for a body: its message and param. */
function problem(body: unknown): { message: string; param: string | null; status: number } {
  const error = apiErrorOf(() => validateMessagesRequest(body));
  return { message: error.message, param: error.param, status: error.status };
}

describe('Messages request validation', () => {
  it('accepts what Claude Code sends, and returns the same object with unknown fields kept', () => {
    const body = messagesFixture('claude-code-request.json');
    body.some_future_field = { kept: true };
    const validated = validateMessagesRequest(body);
    expect(validated).toBe(body);
    expect(validated.some_future_field).toEqual({ kept: true });
  });

  it('requires max_tokens as an integer, 0 included (Anthropic warms the prompt cache with it)', () => {
    const { max_tokens: _, ...withoutMax } = minimal();
    expect(problem(withoutMax)).toEqual({ message: 'max_tokens: Field required', param: 'max_tokens', status: 400 });
    expect(problem({ ...minimal(), max_tokens: 1.5 }).message).toBe('max_tokens: Input should be a valid integer');
    expect(problem({ ...minimal(), max_tokens: -1 }).message).toBe(
      'max_tokens: Input should be greater than or equal to 0',
    );
    expect(validateMessagesRequest({ ...minimal(), max_tokens: 0 }).max_tokens).toBe(0);
  });

  it('names the field of each problem with Anthropic’s dotted paths and wording', () => {
    expect(problem({ ...minimal(), model: 7 }).message).toBe('model: Input should be a valid string');
    expect(problem({ ...minimal(), messages: [] }).message).toBe(
      'messages: List should have at least 1 item after validation, not 0',
    );
    expect(problem({ ...minimal(), messages: [{ role: 'tool', content: 'x' }] }).message).toBe(
      "messages.0.role: Input should be 'user', 'assistant' or 'system'",
    );
    const blocks = (content: unknown[]) => ({ ...minimal(), messages: [{ role: 'user', content }] });
    expect(
      problem(
        blocks([
          { type: 'text', text: 'a' },
          { type: 'image', source: {} },
        ]),
      ),
    ).toMatchObject({
      message: 'messages.0.content.1.source.type: Field required',
      param: 'messages.0.content.1.source.type',
    });
    expect(problem(blocks([{ text: 'no type' }])).message).toBe(
      "messages.0.content.0: Unable to extract tag using discriminator 'type'",
    );
    expect(
      problem(blocks([{ type: 'tool_result', tool_use_id: 'x', content: [{ type: 'text', text: 3 }] }])).message,
    ).toBe('messages.0.content.0.content.0.text: Input should be a valid string');
    expect(problem({ ...minimal(), temperature: 1.5 }).message).toBe(
      'temperature: Input should be less than or equal to 1',
    );
    expect(problem({ ...minimal(), top_k: -1 }).message).toBe('top_k: Input should be greater than or equal to 0');
    expect(problem({ ...minimal(), stop_sequences: ['a', 2] }).message).toBe(
      'stop_sequences.1: Input should be a valid string',
    );
    expect(problem({ ...minimal(), system: [{ type: 'image' }] }).message).toBe(
      "system.0.type: Input should be 'text'",
    );
    expect(problem({ ...minimal(), tool_choice: { type: 'required' } }).message).toBe(
      "tool_choice.type: Input should be 'auto', 'any', 'tool' or 'none'",
    );
    expect(problem({ ...minimal(), tool_choice: { type: 'tool' } }).message).toBe('tool_choice.name: Field required');
    expect(problem({ ...minimal(), thinking: { type: 'enabled' } }).message).toBe(
      'thinking.budget_tokens: Field required',
    );
    expect(problem({ ...minimal(), tools: [{ name: 'a' }] }).message).toBe('tools.0.input_schema: Field required');
    expect(problem({ ...minimal(), metadata: { user_id: 5 } }).message).toBe(
      'metadata.user_id: Input should be a valid string',
    );
    expect(problem([]).message).toBe('The request body must be a JSON object.');
  });

  it('keeps blocks in the turns that may hold them', () => {
    const turn = (role: string, block: unknown) => ({ ...minimal(), messages: [{ role, content: [block] }] });
    expect(problem(turn('user', { type: 'tool_use', id: 'a', name: 'b', input: {} })).message).toBe(
      'messages.0.content.0.type: tool_use blocks can only be in assistant messages',
    );
    expect(problem(turn('assistant', { type: 'tool_result', tool_use_id: 'a' })).message).toBe(
      'messages.0.content.0.type: tool_result blocks can only be in user messages',
    );
    expect(problem(turn('assistant', { type: 'thinking', thinking: 'x' })).message).toBe(
      'messages.0.content.0.signature: Field required',
    );
    expect(problem(turn('assistant', { type: 'tool_use', id: 'a', name: 'b', input: [] })).message).toBe(
      'messages.0.content.0.input: Input should be a valid dictionary',
    );
  });

  it('lets blocks, tools and fields it does not know through, for Anthropic to judge', () => {
    const body = {
      ...minimal(),
      messages: [
        { role: 'user', content: [{ type: 'container_upload', file_id: 'f' }] },
        { role: 'assistant', content: [{ type: 'server_tool_use', id: 's', name: 'web_search', input: {} }] },
      ],
      tools: [{ type: 'web_search_20250305', name: 'web_search', max_uses: 3 }],
      mcp_servers: [{ type: 'url', url: 'https://example.com', name: 'x' }],
      container: 'container_1',
      service_tier: 'auto',
    };
    expect(validateMessagesRequest(body)).toBe(body);
    expect(problem({ ...minimal(), tools: [{ type: 'web_search_20250305' }] }).message).toBe(
      'tools.0.name: Field required',
    );
  });

  it('validates count_tokens bodies without max_tokens', () => {
    const { max_tokens: _, ...body } = minimal();
    expect(validateCountTokensRequest(body)).toBe(body);
    expect(apiErrorOf(() => validateCountTokensRequest({ model: 'm' })).message).toBe('messages: Field required');
  });
});
