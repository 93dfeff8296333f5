import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/errors/api-error.js';
import type { ChatCompletionRequest } from '../../src/openai/types.js';
import { convertRequest } from '../../src/providers/gemini/convert-request.js';
import { convertResponse } from '../../src/providers/gemini/convert-response.js';
import { mapFinishReason } from '../../src/providers/gemini/map-finish-reason.js';
import { parseGeminiError } from '../../src/providers/gemini/parse-error.js';
import { createGeminiStreamTranslator } from '../../src/providers/gemini/translate-stream.js';
import { attachSignature, newToolCallId, splitToolCallId, stripSignatures } from '../../src/providers/tool-call-id.js';

const convert = (request: Partial<ChatCompletionRequest>) =>
  convertRequest({ model: 'm', messages: [{ role: 'user', content: 'hi' }], ...request } as ChatCompletionRequest);

describe('tool-call ids', () => {
  it('carry a thought signature losslessly inside the [A-Za-z0-9_-] alphabet', () => {
    const signature = Buffer.from([0xfb, 0xff, 0x00, 0x3e, 0x3f, 1, 2, 3]).toString('base64');
    const id = attachSignature(newToolCallId(), signature);
    expect(id).toMatch(/^call_[A-Za-z0-9]{24}__sig_[A-Za-z0-9_-]+$/);
    expect(splitToolCallId(id).signature).toBe(signature);
    expect(splitToolCallId('call_plain')).toEqual({ id: 'call_plain', signature: undefined });
  });

  it('are stripped of signatures for other providers, leaving other requests untouched', () => {
    const id = attachSignature('call_a', 'c2ln');
    const request = {
      model: 'm',
      messages: [
        {
          role: 'assistant' as const,
          content: null,
          tool_calls: [{ id, type: 'function' as const, function: { name: 'f', arguments: '{}' } }],
        },
        { role: 'tool' as const, tool_call_id: id, content: 'ok' },
      ],
    };
    const stripped = stripSignatures(request);
    expect(stripped.messages[0]?.tool_calls?.[0]?.id).toBe('call_a');
    expect(stripped.messages[1]?.tool_call_id).toBe('call_a');
    const plain = { model: 'm', messages: [{ role: 'user' as const, content: 'x' }] };
    expect(stripSignatures(plain)).toBe(plain);
  });
});

describe('Gemini request translation', () => {
  it('maps sampling, candidate count, logprobs and JSON output', () => {
    const body = convert({
      n: 2,
      seed: 3,
      presence_penalty: 0.5,
      logprobs: true,
      top_logprobs: 4,
      response_format: { type: 'json_object' },
    });
    expect(body.generationConfig).toEqual({
      candidateCount: 2,
      seed: 3,
      presencePenalty: 0.5,
      responseLogprobs: true,
      logprobs: 4,
      responseMimeType: 'application/json',
    });
  });

  it('maps tool_choice to functionCallingConfig', () => {
    const tools = [{ type: 'function', function: { name: 'a' } }];
    expect(convert({ tools, tool_choice: 'required' }).toolConfig).toEqual({ functionCallingConfig: { mode: 'ANY' } });
    expect(convert({ tools, tool_choice: 'none' }).toolConfig).toEqual({ functionCallingConfig: { mode: 'NONE' } });
    expect(convert({ tools, tool_choice: { type: 'function', function: { name: 'a' } } }).toolConfig).toEqual({
      functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['a'] },
    });
  });

  it('refuses a tool result that answers no earlier tool call (Gemini needs the function name)', () => {
    try {
      convert({ messages: [{ role: 'tool', tool_call_id: 'call_x', content: 'r' }] });
      throw new Error('expected a refusal');
    } catch (error) {
      expect(error).toBeInstanceOf(ApiError);
      expect((error as ApiError).param).toBe('messages[0].tool_call_id');
    }
  });

  it('sends audio as inline data and guesses image types from http URLs', () => {
    const body = convert({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'input_audio', input_audio: { data: 'AAA', format: 'mp3' } },
            { type: 'image_url', image_url: { url: 'https://x.test/a/pic.webp?size=2' } },
            // image/jpg is what clients write for JPEG; Gemini takes only image/jpeg.
            { type: 'image_url', image_url: { url: 'data:image/jpg;base64,/9j/' } },
          ],
        },
      ],
    });
    expect(body.contents[0]?.parts).toEqual([
      { inlineData: { mimeType: 'audio/mp3', data: 'AAA' } },
      { fileData: { mimeType: 'image/webp', fileUri: 'https://x.test/a/pic.webp?size=2' } },
      { inlineData: { mimeType: 'image/jpeg', data: '/9j/' } },
    ]);
  });
});

describe('Gemini responses, streams and errors', () => {
  it('maps finish reasons; a function call means tool_calls', () => {
    expect(mapFinishReason('STOP', false)).toBe('stop');
    expect(mapFinishReason('STOP', true)).toBe('tool_calls');
    expect(mapFinishReason('MAX_TOKENS', false)).toBe('length');
    expect(mapFinishReason('SAFETY', false)).toBe('content_filter');
    expect(mapFinishReason('PROHIBITED_CONTENT', false)).toBe('content_filter');
    expect(mapFinishReason('MALFORMED_FUNCTION_CALL', false)).toBe('stop');
  });

  it('turns candidates into choices, thoughts into reasoning_content, logprobs into OpenAI logprobs', () => {
    const completion = convertResponse(
      {
        candidates: [
          {
            index: 0,
            content: { parts: [{ text: 'think', thought: true }, { text: 'Hi' }] },
            finishReason: 'STOP',
            logprobsResult: {
              chosenCandidates: [{ token: 'Hi', logProbability: -0.1 }],
              topCandidates: [
                {
                  candidates: [
                    { token: 'Hi', logProbability: -0.1 },
                    { token: 'Hey', logProbability: -2 },
                  ],
                },
              ],
            },
          },
          { index: 1, content: { parts: [{ text: 'Hello' }] }, finishReason: 'MAX_TOKENS' },
        ],
        responseId: 'r1',
      },
      'gemini-x',
      7,
    );
    expect(completion.id).toBe('chatcmpl-r1');
    expect(completion.model).toBe('gemini-x');
    expect(completion.choices[0]?.message).toMatchObject({ content: 'Hi', reasoning_content: 'think' });
    expect(completion.choices[0]?.logprobs).toEqual({
      content: [
        {
          token: 'Hi',
          logprob: -0.1,
          bytes: [72, 105],
          top_logprobs: [
            { token: 'Hi', logprob: -0.1, bytes: [72, 105] },
            { token: 'Hey', logprob: -2, bytes: [72, 101, 121] },
          ],
        },
      ],
      refusal: null,
    });
    expect(completion.choices[1]).toMatchObject({ index: 1, finish_reason: 'length' });
    expect(completion.usage).toBeUndefined();
  });

  it('answers a blocked prompt with an empty choice finished by content_filter', () => {
    const completion = convertResponse({ promptFeedback: { blockReason: 'SAFETY' } }, 'g', 1);
    expect(completion.choices).toEqual([
      {
        index: 0,
        message: { role: 'assistant', content: null, refusal: null },
        logprobs: null,
        finish_reason: 'content_filter',
      },
    ]);
  });

  it('streams several candidates, each with its own role delta and finish', () => {
    const translator = createGeminiStreamTranslator('g', 'm', 1);
    const chunks = [
      {
        candidates: [
          { index: 0, content: { parts: [{ text: 'a' }] } },
          { index: 1, content: { parts: [{ text: 'b' }] } },
        ],
      },
      {
        candidates: [
          { index: 0, finishReason: 'STOP' },
          { index: 1, finishReason: 'STOP' },
        ],
        usageMetadata: { promptTokenCount: 2, candidatesTokenCount: 2 },
      },
    ].flatMap((event) => translator.push(event));
    expect(
      chunks.map((chunk) => [chunk.choices[0]?.index, chunk.choices[0]?.delta, chunk.choices[0]?.finish_reason]),
    ).toEqual([
      [0, { role: 'assistant', content: '' }, null],
      [0, { content: 'a' }, null],
      [1, { role: 'assistant', content: '' }, null],
      [1, { content: 'b' }, null],
      [0, {}, 'stop'],
      [1, {}, 'stop'],
    ]);
    expect(translator.end()[0]?.usage).toMatchObject({ prompt_tokens: 2, completion_tokens: 2 });
  });

  it('reads Google error bodies: an invalid key is the gateway’s problem, RetryInfo is a retry-after', () => {
    const invalidKey = JSON.stringify({
      error: {
        code: 400,
        message: 'API key not valid. Please pass a valid API key.',
        status: 'INVALID_ARGUMENT',
        details: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'API_KEY_INVALID' }],
      },
    });
    expect(parseGeminiError('g', 400, {}, invalidKey)).toMatchObject({ status: 502, code: 'upstream_auth_failed' });
    const limited = JSON.stringify([
      {
        error: {
          code: 429,
          message: 'quota',
          status: 'RESOURCE_EXHAUSTED',
          details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '12.5s' }],
        },
      },
    ]);
    expect(parseGeminiError('g', 429, {}, limited).headers).toEqual({ 'retry-after': '13', 'retry-after-ms': '12500' });
  });
});
