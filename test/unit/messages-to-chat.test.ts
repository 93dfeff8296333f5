import { describe, expect, it } from 'vitest';
import { toChatRequest } from '../../src/api/v1/messages/to-chat-request.js';
import { validateMessagesRequest } from '../../src/api/v1/messages/validate-request.js';
import { validateChatRequest } from '../../src/openai/validate-chat-request.js';
import type { MessagesRequest } from '../../src/providers/anthropic/wire-types.js';
import { convertRequest as toGemini } from '../../src/providers/gemini/convert-request.js';
import { apiErrorOf } from '../support/api-error.js';
import { messagesFixture } from '../support/messages-fixtures.js';

const request = (fields: Record<string, unknown>): MessagesRequest =>
  validateMessagesRequest({ model: 'm', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }], ...fields });

describe('Messages -> chat translation', () => {
  it('translates a Claude Code turn sequence exactly as recorded, naming what it left out', () => {
    const translation = toChatRequest(validateMessagesRequest(messagesFixture('claude-code-request.json')), 'openai');
    expect(translation.request).toEqual(messagesFixture('claude-code-request.chat.json'));
    expect(translation.dropped).toEqual(['thinking', 'context_management']);
    // What comes out is a chat request the gateway's own chat validation accepts.
    expect(() => validateChatRequest(structuredClone(translation.request))).not.toThrow();
  });

  it('gives the Gemini adapter a request it can translate: tool results find their calls, images stay', () => {
    const { request: chat } = toChatRequest(
      validateMessagesRequest(messagesFixture('claude-code-request.json')),
      'gemini',
    );
    const gemini = toGemini(chat);
    expect(gemini.systemInstruction?.parts).toHaveLength(1);
    const parts = gemini.contents.flatMap((content) => content.parts);
    expect(parts.filter((part) => 'functionCall' in part)).toHaveLength(3);
    expect(parts.filter((part) => 'functionResponse' in part).map((part) => part.functionResponse?.name)).toEqual([
      'Bash',
      'Read',
      'Bash',
    ]);
    expect(parts.some((part) => part.inlineData?.mimeType === 'image/png')).toBe(true);
  });

  it('puts tool results first in their turn, once each, even when text came before them', () => {
    const { request: chat } = toChatRequest(
      request({
        messages: [
          { role: 'user', content: 'go' },
          { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'f', input: {} }] },
          {
            role: 'user',
            content: [
              { type: 'text', text: 'before' },
              { type: 'tool_result', tool_use_id: 't1', content: 'done' },
            ],
          },
          // A second user turn in a row is the same turn, as Anthropic combines them.
          { role: 'user', content: 'after' },
        ],
      }),
      'openai',
    );
    expect(chat.messages.slice(2)).toEqual([
      { role: 'tool', tool_call_id: 't1', content: 'done' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'before' },
          { type: 'text', text: 'after' },
        ],
      },
    ]);
  });

  it('maps tool_choice, disable_parallel_tool_use and drops a tool choice without tools', () => {
    const tools = [{ name: 'f', input_schema: { type: 'object' }, strict: true }];
    const chat = (tool_choice: unknown) => toChatRequest(request({ tools, tool_choice }), 'openai').request;
    expect(chat({ type: 'auto' }).tool_choice).toBe('auto');
    expect(chat({ type: 'any' }).tool_choice).toBe('required');
    expect(chat({ type: 'none', disable_parallel_tool_use: true })).toMatchObject({ tool_choice: 'none' });
    expect(chat({ type: 'none', disable_parallel_tool_use: true })).not.toHaveProperty('parallel_tool_calls');
    expect(chat({ type: 'tool', name: 'f', disable_parallel_tool_use: true })).toMatchObject({
      tool_choice: { type: 'function', function: { name: 'f' } },
      parallel_tool_calls: false,
    });
    expect(chat(undefined).tools).toEqual([
      { type: 'function', function: { name: 'f', parameters: { type: 'object' }, strict: true } },
    ]);
    expect(toChatRequest(request({ tool_choice: { type: 'any' } }), 'openai').request).not.toHaveProperty(
      'tool_choice',
    );
  });

  it('translates sampling and output parameters, and keeps top_k only where the provider takes it', () => {
    const fields = {
      stop_sequences: ['END'],
      temperature: 0.2,
      top_p: 0.9,
      top_k: 5,
      output_config: { effort: 'high', format: { type: 'json_schema', schema: { type: 'object' } } },
      thinking: { type: 'disabled' },
      service_tier: 'auto',
    };
    const openai = toChatRequest(request(fields), 'openai');
    expect(openai.request).toMatchObject({
      stop: ['END'],
      temperature: 0.2,
      top_p: 0.9,
      max_completion_tokens: 100,
      response_format: { type: 'json_schema', json_schema: { name: 'response', schema: { type: 'object' } } },
    });
    expect(openai.request).not.toHaveProperty('top_k');
    expect(openai.dropped).toEqual(['top_k', 'output_config.effort', 'service_tier']);
    const gemini = toChatRequest(request(fields), 'gemini');
    expect(gemini.request.top_k).toBe(5);
    expect(gemini.dropped).toEqual(['output_config.effort', 'service_tier']);
    expect(toChatRequest(request(fields), 'local').dropped).toContain('top_k');
  });

  it('translates images, documents and search results into chat content parts', () => {
    const { request: chat } = toChatRequest(
      request({
        messages: [
          {
            role: 'user',
            content: [
              { type: 'image', source: { type: 'url', url: 'https://example.com/a.png' } },
              {
                type: 'document',
                title: 'spec.pdf',
                source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0=' },
              },
              { type: 'document', title: 'Notes', source: { type: 'text', media_type: 'text/plain', data: 'n' } },
              {
                type: 'search_result',
                title: 'T',
                source: 'https://s',
                content: [
                  { type: 'text', text: 'p1' },
                  { type: 'text', text: 'p2' },
                ],
              },
            ],
          },
        ],
      }),
      'gemini',
    );
    expect(chat.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'image_url', image_url: { url: 'https://example.com/a.png' } },
          { type: 'file', file: { file_data: 'data:application/pdf;base64,JVBERi0=', filename: 'spec.pdf' } },
          { type: 'text', text: 'Notes\n\nn' },
          { type: 'text', text: 'T\nhttps://s\n\np1\n\np2' },
        ],
      },
    ]);
  });

  it('turns a system turn into a system message where it stands', () => {
    const { request: chat } = toChatRequest(
      request({
        system: 'top',
        messages: [
          { role: 'user', content: 'a' },
          { role: 'system', content: 'now be brief' },
          { role: 'user', content: 'b' },
        ],
      }),
      'openai',
    );
    expect(chat.messages).toEqual([
      { role: 'system', content: 'top' },
      { role: 'user', content: 'a' },
      { role: 'system', content: 'now be brief' },
      { role: 'user', content: 'b' },
    ]);
  });

  it('refuses what cannot work on another model, naming it', () => {
    const serverTool = apiErrorOf(() =>
      toChatRequest(request({ tools: [{ type: 'web_search_20250305', name: 'web_search' }] }), 'openai'),
    );
    expect(serverTool).toMatchObject({ status: 400, param: 'tools.0.type', code: 'unsupported_value' });
    expect(serverTool.message).toBe(
      "tools.0.type: the tool 'web_search' of type 'web_search_20250305' (run by Anthropic, or defined by Anthropic for its models) cannot be sent to this model (provider type: openai).",
    );
    const fileImage = apiErrorOf(() =>
      toChatRequest(
        request({ messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'file', file_id: 'f' } }] }] }),
        'gemini',
      ),
    );
    expect(fileImage.param).toBe('messages.0.content.0.source.type');
    const serverBlock = apiErrorOf(() =>
      toChatRequest(
        request({
          messages: [
            { role: 'user', content: 'q' },
            { role: 'assistant', content: [{ type: 'server_tool_use', id: 's', name: 'web_search', input: {} }] },
          ],
        }),
        'openai',
      ),
    );
    expect(serverBlock.param).toBe('messages.1.content.0.type');
    expect(apiErrorOf(() => toChatRequest(request({ mcp_servers: [{ type: 'url' }] }), 'openai')).param).toBe(
      'mcp_servers',
    );
    expect(apiErrorOf(() => toChatRequest(request({ max_tokens: 0 }), 'openai')).param).toBe('max_tokens');
  });
});
