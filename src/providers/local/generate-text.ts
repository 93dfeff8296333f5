import type { ControlledEvaluateIndexOutput, ControlledEvaluateInputItem, Token } from 'node-llama-cpp';
import type { TextCompletionCall } from '../provider.js';
import { abortError, generationFailed } from './generation-errors.js';
import { HeldText } from './held-text.js';
import type { LocalRuntime, LocalSlot } from './runtime.js';
import type { SlotLease } from './slot-pool.js';
import { StallWatchdog } from './stall-watchdog.js';
import type { PreparedPrompt, PreparedTextGeneration } from './text-prompts.js';
import type { LocalUsage } from './to-openai.js';

/**
 * Legacy text completions on the local model, one prompt after the other on one leased slot: the raw prompt evaluated
 * (with, for `echo` and `logprobs`, each prompt token's logprob given the tokens before it), then one token at a time
 * sampled with the request's settings until max_tokens, an end-of-generation token or a stop sequence. Logprobs are
 * the model's own distribution (log-softmax of the logits, before temperature and truncation), as OpenAI reports
 * them. Text is handed on as soon as it cannot be cut by a stop sequence; a token that ends inside a UTF-8 character
 * waits for the tokens that complete it.
 */

export interface TokenLogprob {
  /** The token as text. */
  token: string;
  /** null for the first token of an echoed prompt that nothing came before. */
  logprob: number | null;
  top: Record<string, number> | null;
}

export interface TextPiece {
  text: string;
  logprob?: TokenLogprob;
}

export type TextGenerationEvent =
  | { type: 'text'; choice: number; pieces: TextPiece[] }
  | { type: 'finish'; choice: number; finishReason: 'stop' | 'length' }
  | { type: 'usage'; usage: LocalUsage };

/** Tokens before a token that its text may depend on (SentencePiece's leading space, byte sequences). */
const detokenizeContext = 8;
/** A UTF-8 character is at most 4 bytes: a token group still incomplete after that is passed on as it is. */
const maxPartialTokens = 4;
/** Generated tokens the presence and frequency penalties look back on (as chat's, generate.ts). */
const penaltyWindowTokens = 256;

/** Log-probabilities from a sampled position's logits: log-softmax, with the maximum and total weight reported. */
function logprobReader(next: ControlledEvaluateIndexOutput['next'] | undefined) {
  const logits = next?.logits;
  const weight = next?.totalLogitWeight;
  if (!logits || weight === undefined) return undefined;
  const [, maxLogit] = logits.entries().next().value ?? [0, 0];
  const base = maxLogit + Math.log(weight);
  return {
    of: (token: Token): number | null => {
      const logit = logits.get(token);
      return logit === undefined ? null : logit - base;
    },
    top: (count: number, text: (token: Token) => string): Record<string, number> => {
      const top: Record<string, number> = {};
      let taken = 0;
      for (const [token, logit] of logits) {
        if (taken >= count) break;
        top[text(token)] = logit - base;
        taken++;
      }
      return top;
    },
  };
}

export async function* generateText(
  runtime: LocalRuntime,
  lease: SlotLease<LocalSlot>,
  prepared: PreparedTextGeneration,
  call: TextCompletionCall,
): AsyncGenerator<TextGenerationEvent> {
  const usage: LocalUsage = { promptTokens: 0, cachedTokens: 0, completionTokens: 0, reasoningTokens: 0 };
  const watchdog = new StallWatchdog(runtime.timeouts, runtime.name);
  try {
    for (const [choice, prompt] of prepared.prompts.entries()) {
      usage.promptTokens += prompt.tokens.length;
      yield* generateChoice(runtime, lease.slot, prepared, prompt, choice, call, usage, watchdog);
    }
    yield { type: 'usage', usage };
  } finally {
    await watchdog.returnSlot(lease);
  }
}

async function* generateChoice(
  runtime: LocalRuntime,
  slot: LocalSlot,
  prepared: PreparedTextGeneration,
  prompt: PreparedPrompt,
  choice: number,
  call: TextCompletionCall,
  usage: LocalUsage,
  watchdog: StallWatchdog,
): AsyncGenerator<TextGenerationEvent> {
  const { model } = runtime;
  const { sequence } = slot;
  const { signal } = call;
  const { options, logprobs: topCount } = prepared;
  const tokens = prompt.tokens;
  const withLogprobs = topCount !== undefined;
  const textOf = (token: Token, before: readonly Token[]) =>
    model.detokenize([token], true, before.slice(-detokenizeContext));
  const logitsFilter = (next?: Token) => ({
    filter: {
      tokens: next === undefined ? [] : [next],
      includeTop: topCount ?? 0,
      includeMax: true,
      includeSelected: true,
    },
  });
  // A fresh sampler per step (node-llama-cpp's controlled evaluation): each gets its own seed, derived from the
  // request's so a seeded request repeats, never the same seed twice.
  const baseSeed = options.seed ?? Math.floor(Math.random() * 2 ** 32);
  const penalties = options.frequencyPenalty !== 0 || options.presencePenalty !== 0;
  let tokenBias: InstanceType<LocalRuntime['library']['TokenBias']> | undefined;
  if (options.logitBias.length > 0) {
    tokenBias = new runtime.library.TokenBias(model.tokenizer);
    for (const [token, bias] of options.logitBias)
      tokenBias.set(token as Token, bias <= -100 ? 'never' : { logit: bias });
  }
  const generated: Token[] = [];
  const sampling = (step: number) => ({
    temperature: options.temperature,
    topP: options.topP,
    topK: options.topK,
    minP: options.minP,
    seed: (baseSeed + step * 0x9e3779b9) % 2 ** 32,
    ...(tokenBias === undefined ? {} : { tokenBias }),
    ...(penalties
      ? {
          repeatPenalty: {
            punishTokens: generated.slice(-penaltyWindowTokens),
            maxPunishTokens: penaltyWindowTokens,
            penalty: 1,
            frequencyPenalty: options.frequencyPenalty,
            presencePenalty: options.presencePenalty,
          },
        }
      : {}),
  });
  const generate = prompt.maxTokens > 0;
  const scoreEcho = prepared.echo && withLogprobs;

  let outputs: Array<ControlledEvaluateIndexOutput | undefined> = [];
  try {
    // Nothing of the slot's previous request is reused: raw prompts are evaluated from the start.
    await watchdog.guard(sequence.clearHistory());
    if (generate || scoreEcho) {
      const items = tokens.map((token, index): ControlledEvaluateInputItem => {
        const last = index === tokens.length - 1;
        if (last && generate) {
          return [
            token,
            {
              generateNext: {
                token: true,
                options: sampling(0),
                ...(withLogprobs ? { logits: logitsFilter(), totalLogitWeight: true } : {}),
              },
            },
          ];
        }
        if (scoreEcho && !last) {
          return [token, { generateNext: { logits: logitsFilter(tokens[index + 1]), totalLogitWeight: true } }];
        }
        return token;
      });
      outputs = await watchdog.guard(sequence.controlledEvaluate(items));
      watchdog.progress();
    }
  } catch (error) {
    throw signal.aborted ? abortError(signal.reason) : generationFailed(error);
  }

  if (prepared.echo) {
    const pieces: TextPiece[] = [];
    for (let index = prompt.added; index < tokens.length; index++) {
      const token = tokens[index] as Token;
      const text = textOf(token, tokens.slice(0, index));
      const reader = index > 0 ? logprobReader(outputs[index - 1]?.next) : undefined;
      pieces.push(
        withLogprobs
          ? {
              text,
              logprob: {
                token: text,
                logprob: reader?.of(token) ?? null,
                top: reader ? reader.top(topCount, (other) => textOf(other, tokens.slice(0, index))) : null,
              },
            }
          : { text },
      );
    }
    if (pieces.length > 0) yield { type: 'text', choice, pieces };
  }
  if (!generate) {
    yield { type: 'finish', choice, finishReason: 'length' };
    return;
  }

  const held = new HeldText<TextPiece>(options.stop);
  let partial: Array<{ token: Token; next: ControlledEvaluateIndexOutput['next'] | undefined }> = [];
  let next = outputs[tokens.length - 1]?.next;
  let finishReason: 'stop' | 'length' = 'length';
  /** The pending tokens as pieces: their text goes with the last one (the one that completed it). */
  const piecesOf = (group: typeof partial): TextPiece[] => {
    const before = [...tokens, ...generated.slice(0, generated.length - group.length)];
    const text = model.detokenize(
      group.map((item) => item.token),
      true,
      before.slice(-detokenizeContext),
    );
    return group.map((item, position) => {
      const pieceText = position === group.length - 1 ? text : '';
      if (!withLogprobs) return { text: pieceText };
      const reader = logprobReader(item.next);
      const context = [...before, ...group.slice(0, position).map((entry) => entry.token)];
      return {
        text: pieceText,
        logprob: {
          token: textOf(item.token, context),
          logprob: reader?.of(item.token) ?? null,
          top: reader ? reader.top(topCount, (other) => textOf(other, context)) : null,
        },
      };
    });
  };
  for (;;) {
    if (signal.aborted) throw abortError(signal.reason);
    const token = next?.token;
    if (token === undefined || token === null) {
      finishReason = 'stop';
      break;
    }
    generated.push(token);
    usage.completionTokens++;
    if (model.isEogToken(token)) {
      finishReason = 'stop';
      break;
    }
    partial.push({ token, next });
    const pendingText = model.detokenize(
      partial.map((item) => item.token),
      true,
    );
    const complete = !pendingText.endsWith('\uFFFD') || partial.length >= maxPartialTokens;
    if (complete) {
      const release: TextPiece[] = [];
      let stopped = false;
      for (const piece of piecesOf(partial)) {
        const result = held.push(piece);
        release.push(...result.release);
        if (result.stopped) {
          stopped = true;
          break;
        }
      }
      partial = [];
      if (release.length > 0) yield { type: 'text', choice, pieces: release };
      if (stopped) {
        yield { type: 'finish', choice, finishReason: 'stop' };
        return;
      }
    }
    if (generated.length >= prompt.maxTokens) break;
    try {
      const [output] = await watchdog.guard(
        sequence.controlledEvaluate([
          [
            token,
            {
              generateNext: {
                token: true,
                options: sampling(generated.length),
                ...(withLogprobs ? { logits: logitsFilter(), totalLogitWeight: true } : {}),
              },
            },
          ],
        ]),
      );
      watchdog.progress();
      next = output?.next;
    } catch (error) {
      throw signal.aborted ? abortError(signal.reason) : generationFailed(error);
    }
  }
  const rest: TextPiece[] = [];
  let stopped = false;
  for (const piece of partial.length > 0 ? piecesOf(partial) : []) {
    const result = held.push(piece);
    rest.push(...result.release);
    if (result.stopped) {
      stopped = true;
      break;
    }
  }
  if (!stopped) rest.push(...held.flush());
  if (rest.length > 0) yield { type: 'text', choice, pieces: rest };
  yield { type: 'finish', choice, finishReason: stopped ? 'stop' : finishReason };
}
