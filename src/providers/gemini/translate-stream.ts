import type { ChatCompletion } from '../../openai/types.js';
import { checkShape } from '../check-shape.js';
import { malformed } from '../http.js';
import { convertLogprobs } from './convert-logprobs.js';
import { responseId, toolCallOf } from './convert-response.js';
import { convertUsage } from './convert-usage.js';
import { mapFinishReason } from './map-finish-reason.js';
import { geminiErrorInBody } from './parse-error.js';
import { geminiResponseShape } from './response-shape.js';
import type { GeminiResponse, GeminiUsageMetadata } from './wire-types.js';

/**
 * `streamGenerateContent?alt=sse` events -> OpenAI chunks, one translator per stream (state in this closure). Each
 * event is a partial GenerateContentResponse; there is no [DONE]. Per candidate: a role delta first, then text as
 * `content`, thoughts as `reasoning_content`, and each `functionCall` (Gemini sends it whole) as one tool-call delta
 * carrying id, type, name and the complete arguments. A candidate's finish chunk is sent when its `finishReason`
 * arrives; usage (cumulative on every event) is sent once, after the last event.
 */

export interface GeminiStreamTranslator {
  push(event: GeminiResponse): ChatCompletion[];
  /** The usage chunk; throws when no candidate ever finished (a truncated stream). */
  end(): ChatCompletion[];
}

interface CandidateState {
  nextToolIndex: number;
  calledFunctions: boolean;
  finished: boolean;
}

export function createGeminiStreamTranslator(
  providerName: string,
  fallbackModel: string,
  created: number,
): GeminiStreamTranslator {
  let id: string | undefined;
  let model = fallbackModel;
  let usage: GeminiUsageMetadata | undefined;
  let blocked = false;
  const candidates = new Map<number, CandidateState>();

  const chunk = (
    index: number,
    delta: Record<string, unknown>,
    extra: Record<string, unknown> = {},
  ): ChatCompletion => ({
    id: id ?? '',
    object: 'chat.completion.chunk',
    created,
    model,
    choices: [{ index, delta, logprobs: null, finish_reason: null, ...extra }],
  });

  return {
    push(event) {
      if ((event as { error?: unknown }).error !== undefined) throw geminiErrorInBody(providerName, event);
      checkShape(providerName, geminiResponseShape, event, 'stream data');
      id ??= responseId(event);
      if (event.modelVersion) model = event.modelVersion;
      if (event.usageMetadata) usage = event.usageMetadata;
      const chunks: ChatCompletion[] = [];
      if (!event.candidates?.length && event.promptFeedback?.blockReason && candidates.size === 0) {
        blocked = true;
        candidates.set(0, { nextToolIndex: 0, calledFunctions: false, finished: true });
        chunks.push(chunk(0, { role: 'assistant', content: '' }), chunk(0, {}, { finish_reason: 'content_filter' }));
        return chunks;
      }
      event.candidates?.forEach((candidate, position) => {
        const index = candidate.index ?? position;
        let state = candidates.get(index);
        if (!state) {
          state = { nextToolIndex: 0, calledFunctions: false, finished: false };
          candidates.set(index, state);
          chunks.push(chunk(index, { role: 'assistant', content: '' }));
        }
        const logprobs = convertLogprobs(candidate.logprobsResult);
        for (const part of candidate.content?.parts ?? []) {
          if (part.functionCall) {
            state.calledFunctions = true;
            const call = toolCallOf(part);
            chunks.push(chunk(index, { tool_calls: [{ index: state.nextToolIndex++, ...call }] }));
          } else if (typeof part.text === 'string' && part.text !== '') {
            const delta = part.thought ? { reasoning_content: part.text } : { content: part.text };
            chunks.push(chunk(index, delta, part.thought || !logprobs ? {} : { logprobs }));
          }
        }
        if (candidate.finishReason && !state.finished) {
          state.finished = true;
          chunks.push(
            chunk(index, {}, { finish_reason: mapFinishReason(candidate.finishReason, state.calledFunctions) }),
          );
        }
      });
      return chunks;
    },
    end() {
      const finished = [...candidates.values()].some((state) => state.finished);
      if (!finished && !blocked) throw malformed(providerName, 'a stream that ended before any candidate finished');
      const converted = usage && convertUsage(usage);
      // Usage that cannot be believed is left out: the relay then estimates it, as for an upstream that sent none.
      if (!converted) return [];
      return [{ ...chunk(0, {}), choices: [], usage: converted }];
    },
  };
}
