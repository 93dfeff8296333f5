import { describe, expect, it } from 'vitest';
import { inMessagesTerms, messagesParam } from '../../src/api/v1/messages/client-param.js';
import { toChatRequest } from '../../src/api/v1/messages/to-chat-request.js';
import { validateMessagesRequest } from '../../src/api/v1/messages/validate-request.js';
import { ApiError, apiError } from '../../src/errors/api-error.js';

/**
 * The chat paths of a translated Messages request, named by the client's own fields: consecutive messages of one role
 * are one chat message, tool results become tool messages before the rest of their turn, and the system prompt comes
 * first. Each chat path leads back to the block it was made from.
 */

const translation = toChatRequest(
  validateMessagesRequest({
    model: 'm',
    max_tokens: 10,
    system: 'be brief',
    messages: [
      { role: 'user', content: 'weather?' },
      { role: 'user', content: [{ type: 'text', text: 'in Paris' }] },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'checking' },
          { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'P' } },
          { type: 'tool_use', id: 'toolu_2', name: 'get_time', input: {} },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'and this?' },
          { type: 'tool_result', tool_use_id: 'toolu_1', content: 'sunny' },
          { type: 'tool_result', tool_use_id: 'toolu_2', content: 'noon' },
          { type: 'image', source: { type: 'url', url: 'https://example.com/a.png' } },
        ],
      },
    ],
  }),
  'gemini',
);

describe('the Messages field a translated chat path stands for', () => {
  it.each([
    ['messages[0].content', 'system'],
    ['messages[1].content[1].text', 'messages.1.content.0.text'],
    ['messages[1].content', 'messages.0'],
    ['messages[2].content', 'messages.2.content.0'],
    ['messages[2].tool_calls[1].function.arguments', 'messages.2.content.2.input'],
    ['messages[2].tool_calls[0].function.name', 'messages.2.content.1.name'],
    ['messages[2].tool_calls[0].id', 'messages.2.content.1.id'],
    ['messages[4].tool_call_id', 'messages.3.content.2.tool_use_id'],
    ['messages[3].content', 'messages.3.content.1.content'],
    ['messages[5].content[1].image_url.url', 'messages.3.content.3.source'],
    ['messages[5].content[0].text', 'messages.3.content.0.text'],
  ])('%s -> %s', (chatParam, param) => {
    expect(translation.request.messages.map((message) => message.role)).toEqual([
      'system',
      'user',
      'assistant',
      'tool',
      'tool',
      'user',
    ]);
    expect(messagesParam(chatParam, translation.origins)).toBe(param);
  });

  it.each([
    ['tools[0].function.parameters', 'tools.0.input_schema'],
    ['tools[1].function.parameters.properties.city', 'tools.1.input_schema.properties.city'],
    ['tools[0].function.parameters.required[2]', 'tools.0.input_schema.required.2'],
    ['tools[0].function.name', 'tools.0.name'],
    ['tools[0].function.description', 'tools.0.description'],
    ['tools[0].function', 'tools.0'],
    ['tools[3]', 'tools.3'],
    ['max_completion_tokens', 'max_tokens'],
    ['stop', 'stop_sequences'],
    ['stop[1]', 'stop_sequences.1'],
    ['user', 'metadata.user_id'],
    ['parallel_tool_calls', 'tool_choice.disable_parallel_tool_use'],
    ['tool_choice.function.name', 'tool_choice.name'],
    ['response_format', 'output_config.format'],
    ['response_format.json_schema.schema', 'output_config.format.schema'],
    ['response_format.json_schema.schema.properties.a', 'output_config.format.schema.properties.a'],
    ['response_format.json_schema.name', 'output_config.format'],
    ['stream_options.include_usage', 'stream'],
  ])('the chat-only field %s -> %s', (chatParam, param) => {
    expect(messagesParam(chatParam, translation.origins)).toBe(param);
  });

  it('renames a plain chat name only where the message quotes it as a field', () => {
    const renamed = inMessagesTerms(
      apiError(
        'invalid_value',
        "Missing 'response_format.json_schema.schema' for role 'user': a response_format needs one.",
        { param: 'response_format' },
      ),
      translation.origins,
    ) as ApiError;
    expect(renamed.param).toBe('output_config.format');
    expect(renamed.message).toBe(
      "output_config.format: Missing 'output_config.format.schema' for role 'user': a response_format needs one.",
    );
    const user = inMessagesTerms(
      apiError('unsupported_parameter', "Unsupported parameter: 'user' is not supported for any user.", {
        param: 'user',
      }),
      translation.origins,
    ) as ApiError;
    expect(user.message).toBe(
      "metadata.user_id: Unsupported parameter: 'metadata.user_id' is not supported for any user.",
    );
  });

  it('leaves other paths and errors alone', () => {
    for (const same of ['temperature', 'top_p', 'top_k', 'model', 'messages', 'tool_choice', 'max_tokens']) {
      expect(messagesParam(same, translation.origins)).toBeUndefined();
    }
    expect(messagesParam('messages[9].content', translation.origins)).toBeUndefined();
    const plain = new Error('boom');
    expect(inMessagesTerms(plain, translation.origins)).toBe(plain);
    const unnamed = apiError('invalid_value', 'no field');
    expect(inMessagesTerms(unnamed, translation.origins)).toBe(unnamed);
  });

  it('puts the client’s path at the start of the message, in place of the chat wording', () => {
    const renamed = inMessagesTerms(
      apiError('invalid_value', "Invalid 'messages[2].tool_calls[1].function.arguments': expected a JSON object.", {
        param: 'messages[2].tool_calls[1].function.arguments',
      }),
      translation.origins,
    );
    expect(renamed).toBeInstanceOf(ApiError);
    expect((renamed as ApiError).message).toBe('messages.2.content.2.input: expected a JSON object.');
    expect((renamed as ApiError).param).toBe('messages.2.content.2.input');
    expect((renamed as ApiError).status).toBe(400);
  });
});
