import type { Usage } from './types.js';

/**
 * The parts of the legacy text-completions wire format (POST /v1/completions) the gateway reads or writes itself.
 * Open like the chat types: members the gateway does not know pass through to OpenAI-compatible upstreams.
 */

/** A text, texts, one token array, or token arrays: one completion (per `n`) for each prompt. */
export type TextPrompt = string | string[] | number[] | number[][];

export interface TextCompletionRequest {
  model: string;
  prompt: TextPrompt;
  suffix?: string | null;
  max_tokens?: number | null;
  temperature?: number | null;
  top_p?: number | null;
  n?: number | null;
  best_of?: number | null;
  stream?: boolean | null;
  stream_options?: { include_usage?: boolean | null; [field: string]: unknown } | null;
  /** How many most likely tokens to report per position (0-5), with the chosen token's own. */
  logprobs?: number | null;
  /** The prompt is returned before the completion (with its tokens' logprobs when logprobs is set). */
  echo?: boolean | null;
  stop?: string | string[] | null;
  presence_penalty?: number | null;
  frequency_penalty?: number | null;
  logit_bias?: Record<string, number> | null;
  seed?: number | null;
  user?: string | null;
  [field: string]: unknown;
}

export interface TextLogprobs {
  tokens: string[];
  token_logprobs: Array<number | null>;
  top_logprobs: Array<Record<string, number> | null> | null;
  text_offset: number[];
}

export interface TextCompletionChoice {
  text: string;
  index: number;
  logprobs: TextLogprobs | null;
  finish_reason: string | null;
  [field: string]: unknown;
}

export interface TextCompletion {
  id: string;
  object: 'text_completion';
  created: number;
  model: string;
  choices: TextCompletionChoice[];
  usage?: Usage | null;
  [field: string]: unknown;
}
