import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { toChatRequest } from '../../src/api/v1/responses/to-chat-request.js';
import { createToolNameMap } from '../../src/api/v1/responses/tool-names.js';
import type { InputItem, ResponsesRequest } from '../../src/api/v1/responses/types.js';
import { validateResponsesRequest } from '../../src/api/v1/responses/validate-request.js';
import { ApiError } from '../../src/errors/api-error.js';
import { validateChatRequest } from '../../src/openai/validate-chat-request.js';

const fixtures = path.resolve(import.meta.dirname, '../fixtures/responses');
const codexRequest = (): ResponsesRequest =>
  validateResponsesRequest(JSON.parse(readFileSync(path.join(fixtures, 'codex-request.json'), 'utf8')));

function request(fields: Record<string, unknown>): ResponsesRequest {
  return validateResponsesRequest({ model: 'm', ...fields });
}

function errorOf(run: () => unknown): ApiError {
  try {
    run();
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error('no error was thrown');
}

describe('toChatRequest', () => {
  it("translates Codex's request: developer -> system, one assistant turn of tool calls, namespaced names, hosted tool and OpenAI's encrypted reasoning left out and named, the summary carried as reasoning_content", () => {
    const { request: chat, dropped, toolNames } = toChatRequest(codexRequest(), []);
    expect(chat).toEqual({
      model: 'gpt-5-codex',
      messages: [
        { role: 'system', content: '<permissions instructions>Commands run in a sandbox.</permissions instructions>' },
        { role: 'user', content: '<environment_context><cwd>/work/app</cwd></environment_context>' },
        { role: 'user', content: 'What is in this directory?' },
        {
          role: 'assistant',
          content: null,
          reasoning_content: '**Listing the directory**',
          tool_calls: [
            { id: 'call_ls_1', type: 'function', function: { name: 'exec_command', arguments: '{"cmd":"ls"}' } },
            {
              id: 'call_gh_2',
              type: 'function',
              function: { name: 'mcp__github__search_issues', arguments: '{"query":"is:open"}' },
            },
          ],
        },
        { role: 'tool', tool_call_id: 'call_ls_1', content: 'README.md\nsrc\n' },
        { role: 'tool', tool_call_id: 'call_gh_2', content: '[]' },
        { role: 'assistant', content: 'A README and a src folder; no open issues.' },
        { role: 'user', content: 'Look up the latest release.' },
      ],
      stream: true,
      prompt_cache_key: '0199a2c4-6f5e-7d10-b8a4-3c2e1f0d9a87',
      tools: [
        {
          type: 'function',
          function: {
            name: 'exec_command',
            description: 'Runs a shell command and returns its output.',
            parameters: {
              type: 'object',
              properties: { cmd: { type: 'string' } },
              required: ['cmd'],
              additionalProperties: false,
            },
            strict: false,
          },
        },
        {
          type: 'function',
          function: {
            name: 'mcp__github__search_issues',
            description: 'Searches issues.',
            parameters: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] },
          },
        },
      ],
      tool_choice: 'auto',
      parallel_tool_calls: true,
    });
    expect(dropped).toEqual(['tools.web_search', 'input.reasoning.encrypted_content']);
    expect(toolNames.fromChat('mcp__github__search_issues')).toEqual({
      name: 'search_issues',
      namespace: 'mcp__github',
    });
    expect(toolNames.fromChat('exec_command')).toEqual({ name: 'exec_command' });
    // What comes out is a chat request the chat endpoint itself would accept.
    expect(() => validateChatRequest(chat)).not.toThrow();
  });

  it('maps settings to their chat names and keeps the gateway state to itself', () => {
    const { request: chat, dropped } = toChatRequest(
      request({
        input: 'hi',
        instructions: 'Answer in French.',
        max_output_tokens: 300,
        temperature: 0.2,
        top_p: 0.9,
        presence_penalty: 0.5,
        frequency_penalty: 0.1,
        top_logprobs: 3,
        include: ['message.output_text.logprobs'],
        text: {
          format: { type: 'json_schema', name: 'answer', schema: { type: 'object' }, strict: true, description: 'd' },
          verbosity: 'low',
        },
        reasoning: { effort: 'low' },
        metadata: { session: 's1' },
        store: true,
        previous_response_id: 'resp_1',
        user: 'u1',
        safety_identifier: 'hash',
        service_tier: 'flex',
        truncation: 'disabled',
        max_tool_calls: 3,
        top_k: 40,
      }),
      [],
    );
    expect(chat).toEqual({
      model: 'm',
      messages: [
        { role: 'system', content: 'Answer in French.' },
        { role: 'user', content: 'hi' },
      ],
      top_k: 40,
      temperature: 0.2,
      top_p: 0.9,
      presence_penalty: 0.5,
      frequency_penalty: 0.1,
      service_tier: 'flex',
      user: 'u1',
      safety_identifier: 'hash',
      max_completion_tokens: 300,
      response_format: {
        type: 'json_schema',
        json_schema: { name: 'answer', schema: { type: 'object' }, description: 'd', strict: true },
      },
      verbosity: 'low',
      reasoning_effort: 'low',
      logprobs: true,
      top_logprobs: 3,
    });
    expect(dropped).toEqual([]);
    expect(toChatRequest(request({ input: 'x', text: { format: { type: 'json_object' } } }), []).request).toMatchObject(
      {
        response_format: { type: 'json_object' },
      },
    );
    expect(toChatRequest(request({ input: 'x', text: { format: { type: 'text' } } }), []).request).not.toHaveProperty(
      'response_format',
    );
  });

  it('translates content parts, and refuses clearly what chat cannot carry', () => {
    const { request: chat } = toChatRequest(
      request({
        input: [
          {
            role: 'user',
            content: [
              { type: 'input_text', text: 'what is this?' },
              { type: 'input_image', image_url: 'https://example.com/a.png', detail: 'low' },
              { type: 'input_image', image_url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'original' },
              { type: 'input_file', filename: 'a.pdf', file_data: 'data:application/pdf;base64,JVBERi0=' },
              { type: 'input_file', file_id: 'file-1' },
              { type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'wav' } },
            ],
          },
        ],
      }),
      [],
    );
    expect(chat.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'what is this?' },
          { type: 'image_url', image_url: { url: 'https://example.com/a.png', detail: 'low' } },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'high' } },
          { type: 'file', file: { file_data: 'data:application/pdf;base64,JVBERi0=', filename: 'a.pdf' } },
          { type: 'file', file: { file_id: 'file-1' } },
          { type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'wav' } },
        ],
      },
    ]);
    const byFileId = errorOf(() =>
      toChatRequest(request({ input: [{ role: 'user', content: [{ type: 'input_image', file_id: 'file-1' }] }] }), []),
    );
    expect(byFileId).toMatchObject({ status: 400, param: 'input[0].content[0]', code: 'unsupported_value' });
    expect(byFileId.message).toMatch(/file_id.*image_url/);
    const byUrl = errorOf(() =>
      toChatRequest(
        request({
          input: [{ role: 'user', content: [{ type: 'input_file', file_url: 'https://example.com/a.pdf' }] }],
        }),
        [],
      ),
    );
    expect(byUrl).toMatchObject({ param: 'input[0].content[0]', code: 'unsupported_value' });
    const imageInSystem = errorOf(() =>
      toChatRequest(
        request({ input: [{ role: 'system', content: [{ type: 'input_image', image_url: 'https://x/a.png' }] }] }),
        [],
      ),
    );
    expect(imageInSystem).toMatchObject({ param: 'input[0].content[0]', code: 'unsupported_value' });
    const imageFromTool = errorOf(() =>
      toChatRequest(
        request({
          input: [
            { type: 'function_call', call_id: 'c', name: 'f', arguments: '{}' },
            { type: 'function_call_output', call_id: 'c', output: [{ type: 'input_image', image_url: 'https://x' }] },
          ],
        }),
        [],
      ),
    );
    expect(imageFromTool).toMatchObject({ param: 'input[1].output[0]', code: 'unsupported_value' });
  });

  it('refuses a function output that answers no function call, naming its call_id', () => {
    const error = errorOf(() =>
      toChatRequest(
        request({
          input: [
            { role: 'user', content: 'x' },
            { type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}' },
            { type: 'function_call_output', call_id: 'c1', output: 'ok' },
            { type: 'function_call_output', call_id: 'c2', output: 'ok' },
          ],
        }),
        [],
      ),
    );
    expect(error).toMatchObject({ status: 400, param: 'input[3].call_id', code: 'invalid_value' });
    expect(error.message).toContain('c2');
  });

  it('answers function outputs from the replayed history, which comes first and keeps its function calls', () => {
    const history: InputItem[] = [
      { type: 'message', id: 'msg_a', role: 'user', content: [{ type: 'input_text', text: 'weather?' }] },
      {
        type: 'message',
        id: 'msg_b',
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'output_text', text: 'Let me check.', annotations: [], logprobs: [] }],
      },
      { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'lookup', namespace: 'weather', arguments: '{}' },
    ];
    const { request: chat } = toChatRequest(
      request({
        previous_response_id: 'resp_1',
        input: [{ type: 'function_call_output', call_id: 'call_1', output: [{ type: 'input_text', text: 'sunny' }] }],
        tools: [
          { type: 'namespace', name: 'weather', description: 'd', tools: [{ type: 'function', name: 'lookup' }] },
        ],
      }),
      history,
    );
    expect(chat.messages).toEqual([
      { role: 'user', content: 'weather?' },
      {
        role: 'assistant',
        content: 'Let me check.',
        tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'weather__lookup', arguments: '{}' } }],
      },
      { role: 'tool', tool_call_id: 'call_1', content: 'sunny' },
    ]);
    const untranslatable = errorOf(() =>
      toChatRequest(request({ previous_response_id: 'resp_1', input: 'x' }), [
        { type: 'computer_call', id: 'cu_1', call_id: 'c', action: { type: 'click' } },
      ]),
    );
    expect(untranslatable).toMatchObject({ param: 'previous_response_id.type', code: 'unsupported_value' });
  });

  it('sends an item once when the input repeats what the replayed history holds', () => {
    const history: InputItem[] = [
      { type: 'message', id: 'msg_q', role: 'user', content: [{ type: 'input_text', text: 'q' }] },
      { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'f', arguments: '{}' },
    ];
    const { request: chat } = toChatRequest(
      request({
        previous_response_id: 'resp_1',
        input: [
          { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'f', arguments: '{}' },
          { type: 'function_call_output', call_id: 'call_1', output: 'r' },
        ],
      }),
      history,
    );
    expect(chat.messages).toEqual([
      { role: 'user', content: 'q' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{}' } }],
      },
      { role: 'tool', tool_call_id: 'call_1', content: 'r' },
    ]);
  });

  it('carries reasoning back as reasoning_content in its turn (each provider then takes what it can)', () => {
    const input = [
      { role: 'user', content: 'q' },
      {
        type: 'reasoning',
        summary: [{ type: 'summary_text', text: 'short' }],
        content: [{ type: 'reasoning_text', text: 'long' }],
      },
      { type: 'function_call', call_id: 'c', name: 'f', arguments: '{}' },
      { type: 'function_call_output', call_id: 'c', output: 'r' },
      { type: 'reasoning', summary: [{ type: 'summary_text', text: 'second' }] },
      { role: 'assistant', content: [{ type: 'output_text', text: 'done' }] },
      { role: 'user', content: 'next' },
      // A turn holding nothing but reasoning has nothing to send.
      { type: 'reasoning', summary: [{ type: 'summary_text', text: 'alone' }] },
    ];
    const carried = toChatRequest(request({ input }), []);
    expect(carried.request.messages).toEqual([
      { role: 'user', content: 'q' },
      {
        role: 'assistant',
        content: null,
        reasoning_content: 'long',
        tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }],
      },
      { role: 'tool', tool_call_id: 'c', content: 'r' },
      { role: 'assistant', content: 'done', reasoning_content: 'second' },
      { role: 'user', content: 'next' },
    ]);
    expect(carried.dropped).toEqual([]);
    expect(carried.unsignedReasoning).toBe(true);
  });

  it('keeps developer messages as developer for chat servers that take them', () => {
    const { request: chat } = toChatRequest(request({ input: [{ role: 'developer', content: 'rules' }] }), [], {
      developerRole: 'developer',
    });
    expect(chat.messages).toEqual([{ role: 'developer', content: 'rules' }]);
  });

  it('leaves out records of hosted tools that ran before, and refuses items it cannot carry', () => {
    const { request: chat, dropped } = toChatRequest(
      request({
        input: [
          { role: 'user', content: 'search' },
          { type: 'web_search_call', id: 'ws_1', status: 'completed', action: { type: 'search', query: 'x' } },
          { role: 'assistant', content: 'found it' },
        ],
      }),
      [],
    );
    expect(chat.messages).toEqual([
      { role: 'user', content: 'search' },
      { role: 'assistant', content: 'found it' },
    ]);
    expect(dropped).toEqual(['input.web_search_call']);
    for (const type of ['compaction', 'local_shell_call', 'acme:search_result']) {
      const error = errorOf(() => toChatRequest(request({ input: [{ type, id: 'x_1' }] }), []));
      expect(error).toMatchObject({ status: 400, param: 'input[0].type', code: 'unsupported_value' });
    }
    expect(
      errorOf(() => toChatRequest(request({ input: [{ type: 'item_reference', id: 'msg_x' }] }), [])),
    ).toMatchObject({ status: 404, param: 'input[0].id', code: 'item_not_found' });
  });

  it('drops hosted and custom tools, or refuses them when the model is set to refuse', () => {
    const tools = [
      { type: 'function', name: 'f' },
      { type: 'web_search_preview' },
      { type: 'custom', name: 'apply_patch' },
      {
        type: 'namespace',
        name: 'n',
        tools: [
          { type: 'custom', name: 'c' },
          { type: 'function', name: 'g' },
        ],
      },
    ];
    const { request: chat, dropped } = toChatRequest(request({ input: 'x', tools }), []);
    expect((chat.tools as Array<{ function: { name: string } }>).map((tool) => tool.function.name)).toEqual([
      'f',
      'n__g',
    ]);
    expect(dropped).toEqual(['tools.web_search_preview', 'tools.custom']);
    expect(errorOf(() => toChatRequest(request({ input: 'x', tools }), [], { onUnsupported: 'refuse' }))).toMatchObject(
      {
        status: 400,
        param: 'tools[1]',
        code: 'unsupported_parameter',
      },
    );
    // Only tools that are left: no tools, no tool_choice.
    const hostedOnly = toChatRequest(request({ input: 'x', tools: [{ type: 'web_search' }], tool_choice: 'auto' }), []);
    expect(hostedOnly.request).not.toHaveProperty('tools');
    expect(hostedOnly.request).not.toHaveProperty('tool_choice');
  });

  it('maps tool_choice, and refuses forcing a tool that cannot run', () => {
    const tools = [
      { type: 'function', name: 'f' },
      { type: 'namespace', name: 'crm', tools: [{ type: 'function', name: 'lookup' }] },
      { type: 'web_search' },
    ];
    const choice = (toolChoice: unknown) => toChatRequest(request({ input: 'x', tools, tool_choice: toolChoice }), []);
    expect(choice('required').request.tool_choice).toBe('required');
    expect(choice({ type: 'function', name: 'lookup' }).request.tool_choice).toEqual({
      type: 'function',
      function: { name: 'crm__lookup' },
    });
    expect(
      choice({
        type: 'allowed_tools',
        mode: 'required',
        tools: [{ type: 'function', name: 'f' }, { type: 'web_search' }],
      }).request.tool_choice,
    ).toEqual({
      type: 'allowed_tools',
      allowed_tools: { mode: 'required', tools: [{ type: 'function', function: { name: 'f' } }] },
    });
    expect(errorOf(() => choice({ type: 'web_search' }))).toMatchObject({ status: 400, param: 'tool_choice' });
    expect(errorOf(() => choice({ type: 'function', name: 'nope' }))).toMatchObject({ param: 'tool_choice.name' });
    expect(
      errorOf(() =>
        toChatRequest(request({ input: 'x', tools: [{ type: 'web_search' }], tool_choice: 'required' }), []),
      ),
    ).toMatchObject({ param: 'tool_choice', code: 'unsupported_value' });
  });

  it('refuses input that leaves nothing to send', () => {
    expect(errorOf(() => toChatRequest(request({ input: [], instructions: 'x' }), []))).toMatchObject({
      status: 400,
      param: 'input',
      code: 'empty_array',
    });
    expect(
      errorOf(() =>
        toChatRequest(request({ input: [{ type: 'reasoning', summary: [{ type: 'summary_text', text: 'x' }] }] }), []),
      ),
    ).toMatchObject({ param: 'input' });
  });

  it('refuses prompt templates and server-side conversations', () => {
    expect(errorOf(() => toChatRequest(request({ prompt: { id: 'pmpt_1' } }), []))).toMatchObject({ param: 'prompt' });
    expect(errorOf(() => toChatRequest(request({ conversation: 'conv_1', input: 'x' }), []))).toMatchObject({
      param: 'conversation',
    });
  });
});

describe('tool names', () => {
  it('keeps flat names, joins namespaces with __, and hashes what does not fit, reversibly', () => {
    const long = 'x'.repeat(60);
    const names = createToolNameMap([
      { name: 'search', namespace: 'mcp.github' },
      { name: 'a__b' },
      { name: 'b', namespace: 'a' },
      { name: 'lookup', namespace: long },
      { name: 'plain' },
      { name: 'dotted.name' },
    ]);
    const chatNames = [
      names.toChat('search', 'mcp.github'),
      names.toChat('a__b'),
      names.toChat('b', 'a'),
      names.toChat('lookup', long),
      names.toChat('plain'),
      names.toChat('dotted.name'),
    ];
    expect(chatNames[1]).toBe('a__b');
    expect(chatNames[4]).toBe('plain');
    for (const name of chatNames) expect(name).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
    expect(new Set(chatNames).size).toBe(chatNames.length);
    expect(chatNames[0]).toMatch(/^mcp_github__search_[0-9a-f]{8}$/);
    expect(names.fromChat(chatNames[0] as string)).toEqual({ name: 'search', namespace: 'mcp.github' });
    expect(names.fromChat(chatNames[2] as string)).toEqual({ name: 'b', namespace: 'a' });
    expect(names.fromChat(chatNames[3] as string)).toEqual({ name: 'lookup', namespace: long });
    expect(names.fromChat('a__b')).toEqual({ name: 'a__b' });
    expect(names.fromChat('hallucinated')).toEqual({ name: 'hallucinated' });
    // The same tools in another request give the same names (conversations resend their tools each turn).
    expect(createToolNameMap([{ name: 'lookup', namespace: long }]).toChat('lookup', long)).toBe(chatNames[3]);
  });
});
