import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { fromChatCompletion } from '../../src/api/v1/responses/from-chat-completion.js';
import { decodeThinking } from '../../src/api/v1/responses/reasoning-envelope.js';
import { asksForSummary, withReasoningSummary } from '../../src/api/v1/responses/reasoning-summary.js';
import { createResponseObject } from '../../src/api/v1/responses/response-object.js';
import { createResponseStreamTranslator } from '../../src/api/v1/responses/stream-events.js';
import { type ChatTranslation, toChatRequest } from '../../src/api/v1/responses/to-chat-request.js';
import type { OutputReasoning, ResponseEvent, ResponseObject } from '../../src/api/v1/responses/types.js';
import { validateResponsesRequest } from '../../src/api/v1/responses/validate-request.js';
import type { ChatCompletion } from '../../src/openai/types.js';
import { convertRequest as anthropicRequest } from '../../src/providers/anthropic/convert-request.js';
import { convertResponse as anthropicResponse } from '../../src/providers/anthropic/convert-response.js';
import {
  type AnthropicStreamEvent,
  createAnthropicStreamTranslator,
} from '../../src/providers/anthropic/translate-stream.js';
import type { AnthropicResponse } from '../../src/providers/anthropic/wire-types.js';
import { convertRequest as geminiRequest } from '../../src/providers/gemini/convert-request.js';
import { convertResponse as geminiResponse } from '../../src/providers/gemini/convert-response.js';
import { createGeminiStreamTranslator } from '../../src/providers/gemini/translate-stream.js';
import type { GeminiResponse } from '../../src/providers/gemini/wire-types.js';
import type { Deployment } from '../../src/routing/router.js';
import { apiErrorOf } from '../support/api-error.js';

/**
 * `reasoning.summary` on /v1/responses for translated models: asked of the providers that can give one (Claude's
 * thinking, Gemini's thought summaries), left out or refused for the others, and the reasoning text shown as the
 * summary only when it was asked for. Upstream answers are fixtures in each provider's wire format, taken through the
 * provider's translation and then the Responses one, whole and streamed.
 */

const fixtures = path.resolve(import.meta.dirname, '../fixtures/responses');
const fixture = <T>(name: string): T => JSON.parse(readFileSync(path.join(fixtures, name), 'utf8')) as T;

type ProviderType = 'anthropic' | 'gemini' | 'openai' | 'local';
type Policy = 'drop' | 'refuse';

function deployment(type: ProviderType, onUnsupported: Policy, unsupported: string[]): Deployment {
  return {
    id: `${type}/upstream`,
    provider: { name: type, type },
    model: { name: 'm', upstreamModel: 'upstream', parameters: { onUnsupported, unsupported } },
  } as unknown as Deployment;
}

/** The chat translation a deployment of this provider gets, as operation.ts makes it. */
function translate(
  body: Record<string, unknown>,
  type: ProviderType,
  policy: Policy = 'drop',
  unsupported: string[] = [],
): ChatTranslation {
  const request = validateResponsesRequest({ model: 'm', input: '2 + 2?', ...body });
  const translation = toChatRequest(request, [], { onUnsupported: policy });
  return asksForSummary(request)
    ? withReasoningSummary(translation, deployment(type, policy, unsupported))
    : translation;
}

const toAnthropic = (translation: ChatTranslation) =>
  anthropicRequest(translation.request, { upstreamModel: 'claude', stream: false });

const responseFor = (reasoning: Record<string, unknown> | undefined): ResponseObject =>
  createResponseObject(validateResponsesRequest({ model: 'm', input: '2 + 2?', reasoning }), {
    id: 'resp_1',
    createdAt: 1760000000,
    model: 'm',
  });

const reasoningOf = (response: ResponseObject) =>
  response.output.find((item): item is OutputReasoning => item.type === 'reasoning');

function streamed(chunks: readonly ChatCompletion[], response: ResponseObject, encryptThinking = false) {
  const translator = createResponseStreamTranslator({ response, toolNames: toChatNames(), encryptThinking });
  const events: ResponseEvent[] = translator.start();
  for (const chunk of chunks) events.push(...translator.push(chunk));
  events.push(...translator.finish());
  return { events, response: translator.response() };
}

const toChatNames = () => toChatRequest(validateResponsesRequest({ model: 'm', input: 'x' }), []).toolNames;

const summaryEvents = (events: readonly ResponseEvent[]) =>
  events.filter((event) => event.type.startsWith('response.reasoning_summary')).map((event) => event.type);

describe('reasoning.summary for an Anthropic deployment', () => {
  it('turns thinking on at the default (medium) budget when nothing else asks for it, and is not left out', () => {
    for (const reasoning of [{ summary: 'auto' }, { summary: 'detailed' }, { generate_summary: 'concise' }]) {
      const translation = translate({ reasoning }, 'anthropic');
      expect(translation.dropped).not.toContain('reasoning.summary');
      expect(translation.request.reasoning_effort).toBe('medium');
      const body = toAnthropic(translation);
      expect(body.thinking).toEqual({ type: 'enabled', budget_tokens: 2048 });
      expect(body.max_tokens).toBe(4096 + 2048);
    }
  });

  it('keeps the thinking the request already asks for (an effort, or Anthropic’s own thinking)', () => {
    const byEffort = translate({ reasoning: { effort: 'low', summary: 'auto' } }, 'anthropic', 'refuse');
    expect(byEffort.request.reasoning_effort).toBe('low');
    expect(toAnthropic(byEffort).thinking).toEqual({ type: 'enabled', budget_tokens: 1024 });
    const own = translate(
      { reasoning: { summary: 'auto' }, thinking: { type: 'enabled', budget_tokens: 3000 } },
      'anthropic',
    );
    expect(own.request).not.toHaveProperty('reasoning_effort');
    expect(toAnthropic(own).thinking).toEqual({ type: 'enabled', budget_tokens: 3000 });
    expect(own.dropped).not.toContain('reasoning.summary');
  });

  it('is left out (or refused) when Claude cannot think for the request', () => {
    const cases: Array<Record<string, unknown>> = [
      { reasoning: { effort: 'none', summary: 'auto' } },
      { reasoning: { summary: 'auto' }, temperature: 0.2 },
      { reasoning: { summary: 'auto' }, thinking: { type: 'disabled' } },
      { reasoning: { summary: 'auto' }, max_output_tokens: 500 },
      // A tool loop whose signed thinking was not brought back: that turn is answered without thinking.
      {
        reasoning: { summary: 'auto' },
        tools: [{ type: 'function', name: 'f', parameters: { type: 'object' } }],
        input: [
          { role: 'user', content: 'Use f.' },
          { type: 'function_call', call_id: 'toolu_1', name: 'f', arguments: '{}' },
          { type: 'function_call_output', call_id: 'toolu_1', output: 'done' },
        ],
      },
    ];
    for (const body of cases) {
      const translation = translate(body, 'anthropic');
      expect(translation.dropped, JSON.stringify(body)).toContain('reasoning.summary');
      expect(toAnthropic(translation).thinking, JSON.stringify(body)).not.toMatchObject({ type: 'enabled' });
      expect(apiErrorOf(() => translate(body, 'anthropic', 'refuse'))).toMatchObject({
        status: 400,
        code: 'unsupported_parameter',
        param: 'reasoning.summary',
      });
    }
  });

  it('is left out for a model configured as one that does not think', () => {
    for (const unsupported of [['reasoning.summary'], ['reasoning_effort']]) {
      const translation = translate({ reasoning: { summary: 'auto' } }, 'anthropic', 'drop', unsupported);
      expect(translation.dropped).toEqual(['reasoning.summary']);
      expect(translation.request).not.toHaveProperty('reasoning_effort');
    }
    const own = { reasoning: { summary: 'auto' }, thinking: { type: 'enabled', budget_tokens: 3000 } };
    expect(translate(own, 'anthropic', 'drop', ['thinking']).dropped).toEqual(['reasoning.summary']);
  });

  it('changes nothing without a summary (absent or null)', () => {
    for (const reasoning of [undefined, { summary: null }, { effort: 'low' }]) {
      const translation = translate({ reasoning }, 'anthropic', 'refuse');
      expect(translation.dropped).toEqual([]);
      expect(translation.request.reasoning_effort).toBe(reasoning?.effort);
    }
  });

  const answer = anthropicResponse(fixture<AnthropicResponse>('anthropic-thinking.json'), 1760000000);
  const thinking = 'The user asks for 2 + 2, which is 4.';

  it('gives Claude’s thinking as the summary of the reasoning item when asked (JSON)', () => {
    const response = fromChatCompletion(answer, {
      response: responseFor({ summary: 'auto' }),
      toolNames: toChatNames(),
    });
    expect(reasoningOf(response)?.summary).toEqual([{ type: 'summary_text', text: thinking }]);
    expect(response.output[1]).toMatchObject({ type: 'message', content: [{ type: 'output_text', text: 'It is 4.' }] });
  });

  it('gives an empty summary without one, keeping the signed thinking when it is included (JSON)', () => {
    const plain = fromChatCompletion(answer, { response: responseFor({ effort: 'low' }), toolNames: toChatNames() });
    expect(reasoningOf(plain)).toMatchObject({ type: 'reasoning', summary: [] });
    expect(reasoningOf(plain)).not.toHaveProperty('encrypted_content');
    const included = fromChatCompletion(answer, {
      response: responseFor({ effort: 'low' }),
      toolNames: toChatNames(),
      encryptThinking: true,
    });
    expect(reasoningOf(included)?.summary).toEqual([]);
    expect(decodeThinking(reasoningOf(included)?.encrypted_content)).toEqual([
      { type: 'thinking', thinking, signature: 'RXVTaWduYXR1cmU=' },
    ]);
  });

  const chunks = () => {
    const translator = createAnthropicStreamTranslator('anthropic', 'claude', 1760000000);
    return fixture<AnthropicStreamEvent[]>('anthropic-thinking.events.json').flatMap((event) => translator.push(event));
  };

  it('streams Claude’s thinking as the summary events when asked', () => {
    const { events, response } = streamed(chunks(), responseFor({ summary: 'auto' }));
    expect(summaryEvents(events)).toEqual([
      'response.reasoning_summary_part.added',
      'response.reasoning_summary_text.delta',
      'response.reasoning_summary_text.delta',
      'response.reasoning_summary_text.done',
      'response.reasoning_summary_part.done',
    ]);
    expect(reasoningOf(response)?.summary).toEqual([{ type: 'summary_text', text: thinking }]);
  });

  it('streams a reasoning item without summary events without one, its signed thinking kept when included', () => {
    const { events, response } = streamed(chunks(), responseFor(undefined), true);
    expect(summaryEvents(events)).toEqual([]);
    const done = events.find((event) => event.type === 'response.output_item.done')?.item as OutputReasoning;
    expect(done).toMatchObject({ type: 'reasoning', summary: [] });
    expect(decodeThinking(done.encrypted_content)).toEqual([
      { type: 'thinking', thinking, signature: 'RXVTaWduYXR1cmU=' },
    ]);
    expect(response.output.map((item) => item.type)).toEqual(['reasoning', 'message']);
  });
});

describe('reasoning.summary for a Gemini deployment', () => {
  it('asks for the thought summaries (thinkingConfig.includeThoughts), and is not left out', () => {
    const translation = translate({ reasoning: { summary: 'auto' } }, 'gemini', 'refuse');
    expect(translation.dropped).not.toContain('reasoning.summary');
    expect(geminiRequest(translation.request).generationConfig?.thinkingConfig).toEqual({ includeThoughts: true });
    const plain = translate({ reasoning: { summary: null } }, 'gemini', 'refuse');
    expect(geminiRequest(plain.request).generationConfig?.thinkingConfig).toBeUndefined();
  });

  it('is left out for a model configured as one that does not think (Gemini 2.0 refuses thinkingConfig)', () => {
    const translation = translate({ reasoning: { summary: 'auto' } }, 'gemini', 'drop', ['reasoning.summary']);
    expect(translation.dropped).toEqual(['reasoning.summary']);
    expect(geminiRequest(translation.request).generationConfig?.thinkingConfig).toBeUndefined();
  });

  const thoughts = '**Adding the numbers**\n\nTwo and two make four.';

  it('gives the thought parts as the summary (JSON), and an empty summary when none was asked for', () => {
    const answer = geminiResponse(fixture<GeminiResponse>('gemini-thoughts.json'), 'gemini', 1760000000);
    const asked = fromChatCompletion(answer, { response: responseFor({ summary: 'auto' }), toolNames: toChatNames() });
    expect(reasoningOf(asked)?.summary).toEqual([{ type: 'summary_text', text: thoughts }]);
    expect(asked.output[1]).toMatchObject({ type: 'message', content: [{ type: 'output_text', text: 'It is 4.' }] });
    const plain = fromChatCompletion(answer, { response: responseFor(undefined), toolNames: toChatNames() });
    expect(reasoningOf(plain)?.summary).toEqual([]);
  });

  it('streams the thought parts as the summary events', () => {
    const translator = createGeminiStreamTranslator('gemini', 'gemini', 1760000000);
    const chunks = [
      ...fixture<GeminiResponse[]>('gemini-thoughts.events.json').flatMap((event) => translator.push(event)),
      ...translator.end(),
    ];
    const { events, response } = streamed(chunks, responseFor({ summary: 'concise' }));
    expect(summaryEvents(events)).toContain('response.reasoning_summary_text.delta');
    expect(reasoningOf(response)?.summary).toEqual([{ type: 'summary_text', text: thoughts }]);
    expect(response.usage?.output_tokens_details.reasoning_tokens).toBe(20);
  });
});

describe('reasoning.summary for a provider that cannot be asked for its reasoning', () => {
  it.each(['openai', 'local'] as const)('is left out and named for %s, or refused as the model says', (type) => {
    const translation = translate({ reasoning: { summary: 'auto' } }, type);
    expect(translation.dropped).toEqual(['reasoning.summary']);
    expect(translation.request).not.toHaveProperty('include_reasoning');
    expect(translation.request).not.toHaveProperty('reasoning_effort');
    expect(apiErrorOf(() => translate({ reasoning: { summary: 'auto' } }, type, 'refuse'))).toMatchObject({
      status: 400,
      param: 'reasoning.summary',
    });
  });

  it('shows reasoning text such an upstream sends anyway only when a summary was asked for', () => {
    const answer = {
      id: 'chatcmpl-1',
      object: 'chat.completion',
      created: 1760000000,
      model: 'deepseek-reasoner',
      choices: [
        { index: 0, finish_reason: 'stop', message: { role: 'assistant', content: '4', reasoning_content: 'Add.' } },
      ],
    } as unknown as ChatCompletion;
    const asked = fromChatCompletion(answer, { response: responseFor({ summary: 'auto' }), toolNames: toChatNames() });
    expect(reasoningOf(asked)?.summary).toEqual([{ type: 'summary_text', text: 'Add.' }]);
    const plain = fromChatCompletion(answer, { response: responseFor(undefined), toolNames: toChatNames() });
    expect(reasoningOf(plain)?.summary).toEqual([]);
  });
});
