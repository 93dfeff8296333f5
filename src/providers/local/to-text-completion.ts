import { randomUUID } from 'node:crypto';
import type { TextCompletion, TextCompletionChoice, TextLogprobs } from '../../openai/text-completion-types.js';
import type { TextPiece } from './generate-text.js';
import { type LocalUsage, toWireUsage } from './to-openai.js';

/**
 * The legacy completion objects a local text generation is reported as: the whole `text_completion`, or its stream
 * chunks. Pure functions of what the model produced; `text_offset` counts characters from the start of the choice's
 * text (the echoed prompt included), as OpenAI's does.
 */

export interface TextIdentity {
  id: string;
  created: number;
  model: string;
}

export function newTextIdentity(model: string): TextIdentity {
  return { id: `cmpl-${randomUUID().replaceAll('-', '')}`, created: Math.floor(Date.now() / 1000), model };
}

/** Logprobs of pieces whose text starts at `offset` in the choice's text. */
export function logprobsOf(pieces: readonly TextPiece[], offset: number): TextLogprobs {
  const logprobs: TextLogprobs = { tokens: [], token_logprobs: [], top_logprobs: [], text_offset: [] };
  let position = offset;
  for (const piece of pieces) {
    logprobs.tokens.push(piece.logprob?.token ?? piece.text);
    logprobs.token_logprobs.push(piece.logprob?.logprob ?? null);
    logprobs.top_logprobs?.push(piece.logprob?.top ?? null);
    logprobs.text_offset.push(position);
    position += piece.text.length;
  }
  return logprobs;
}

/** A choice built up from its pieces (for the whole completion). */
export class TextChoiceBuilder {
  private readonly pieces: TextPiece[] = [];
  finishReason: 'stop' | 'length' | null = null;

  constructor(
    readonly index: number,
    private readonly withLogprobs: boolean,
  ) {}

  add(pieces: readonly TextPiece[]): void {
    this.pieces.push(...pieces);
  }

  build(): TextCompletionChoice {
    return {
      text: this.pieces.map((piece) => piece.text).join(''),
      index: this.index,
      logprobs: this.withLogprobs ? logprobsOf(this.pieces, 0) : null,
      finish_reason: this.finishReason ?? 'length',
    };
  }
}

export function toTextCompletion(
  identity: TextIdentity,
  choices: readonly TextChoiceBuilder[],
  usage: LocalUsage,
): TextCompletion {
  return {
    id: identity.id,
    object: 'text_completion',
    created: identity.created,
    model: identity.model,
    choices: choices.map((choice) => choice.build()),
    usage: toWireUsage(usage),
  };
}

export function textChunk(identity: TextIdentity, choice: TextCompletionChoice): TextCompletion {
  return {
    id: identity.id,
    object: 'text_completion',
    created: identity.created,
    model: identity.model,
    choices: [choice],
  };
}

export function textUsageChunk(identity: TextIdentity, usage: LocalUsage): TextCompletion {
  return {
    id: identity.id,
    object: 'text_completion',
    created: identity.created,
    model: identity.model,
    choices: [],
    usage: toWireUsage(usage),
  };
}
