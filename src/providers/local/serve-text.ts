import type { TextCompletionCall, TextCompletionResult, TextStreamItem, TextStreamItems } from '../provider.js';
import { generateText, type TextGenerationEvent } from './generate-text.js';
import { holdUntilRead } from './hold-until-read.js';
import type { LocalRuntime } from './runtime.js';
import type { SlotLease } from './slot-pool.js';
import { prepareTextGeneration } from './text-prompts.js';
import type { LocalUsage } from './to-openai.js';
import {
  logprobsOf,
  newTextIdentity,
  TextChoiceBuilder,
  textChunk,
  textUsageChunk,
  toTextCompletion,
} from './to-text-completion.js';

/**
 * Legacy text completions from the local model, as the provider answers them: the request checked and its prompts
 * tokenized before a slot is taken (a prompt that cannot fit is a 400, not a queued request), then the generation's
 * events gathered into one `text_completion`, or turned into its stream chunks as they come.
 */

async function start(runtime: LocalRuntime, call: TextCompletionCall) {
  const prepared = prepareTextGeneration(runtime, call.request);
  const lease = await runtime.slots.acquire(call.signal, call.accountId);
  return { events: generateText(runtime, lease, prepared, call), lease, prepared };
}

export async function completeTextLocally(
  runtime: LocalRuntime,
  call: TextCompletionCall,
): Promise<TextCompletionResult> {
  const { events, prepared } = await start(runtime, call);
  const withLogprobs = prepared.logprobs !== undefined;
  const choices = prepared.prompts.map((_, index) => new TextChoiceBuilder(index, withLogprobs));
  let usage: LocalUsage | undefined;
  for await (const event of events) {
    if (event.type === 'text') choices[event.choice]?.add(event.pieces);
    else if (event.type === 'finish') {
      const choice = choices[event.choice];
      if (choice) choice.finishReason = event.finishReason;
    } else usage = event.usage;
  }
  if (!usage) throw new Error('the local text generation ended without finishing');
  return { completion: toTextCompletion(newTextIdentity(call.request.model), choices, usage) };
}

export async function streamTextLocally(runtime: LocalRuntime, call: TextCompletionCall): Promise<TextStreamItems> {
  const { events, lease, prepared } = await start(runtime, call);
  const read = readOnce(events, lease, call.signal);
  const identity = newTextIdentity(call.request.model);
  const withLogprobs = prepared.logprobs !== undefined;
  const offsets = prepared.prompts.map(() => 0);
  async function* chunks(): AsyncGenerator<TextStreamItem> {
    for await (const event of read()) {
      if (event.type === 'text') {
        const text = event.pieces.map((piece) => piece.text).join('');
        const offset = offsets[event.choice] ?? 0;
        offsets[event.choice] = offset + text.length;
        const logprobs = withLogprobs ? logprobsOf(event.pieces, offset) : null;
        yield { chunk: textChunk(identity, { text, index: event.choice, logprobs, finish_reason: null }) };
      } else if (event.type === 'finish') {
        const choice = { text: '', index: event.choice, logprobs: null, finish_reason: event.finishReason };
        yield { chunk: textChunk(identity, choice) };
      } else {
        yield { chunk: textUsageChunk(identity, event.usage) };
      }
    }
  }
  return chunks();
}

/** The events of a generation that holds a slot, read at most once (the slot's release: hold-until-read.ts). */
function readOnce(
  events: AsyncGenerator<TextGenerationEvent>,
  lease: SlotLease<unknown>,
  signal: TextCompletionCall['signal'],
): () => AsyncGenerator<TextGenerationEvent> {
  const claim = holdUntilRead(lease, signal);
  return async function* read() {
    claim();
    yield* events;
  };
}
