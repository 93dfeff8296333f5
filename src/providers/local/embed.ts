import type { LlamaEmbeddingContext, Token } from 'node-llama-cpp';
import { ApiError, apiError } from '../../errors/api-error.js';
import type { EmbeddingList } from '../../openai/embedding-types.js';
import { eachText } from '../../openai/texts-or-tokens.js';
import type { EmbeddingCall, EmbeddingResult } from '../provider.js';
import type { LocalEmbeddingRuntime } from './runtime.js';
import { cancelled } from './slot-pool.js';
import { StallWatchdog } from './stall-watchdog.js';

/**
 * Embeddings from a local embedding GGUF (node-llama-cpp's embedding context): each input, a text or token ids, is
 * checked against the context before any is evaluated (an input that cannot fit is a 400 naming it, never silently
 * cut), evaluated on one leased context, and its vector L2-normalized, as OpenAI's vectors and llama.cpp's server's
 * are. Usage is the exact number of tokens evaluated (with the BOS/EOS/SEP tokens the model's tokenizer adds).
 */
export async function embedLocally(runtime: LocalEmbeddingRuntime, call: EmbeddingCall): Promise<EmbeddingResult> {
  const { request } = call;
  if (typeof request.dimensions === 'number' && request.dimensions !== runtime.dimensions) {
    throw apiError(
      'unsupported_parameter',
      `The model \`${request.model}\` produces ${runtime.dimensions}-dimensional vectors; 'dimensions' must be ${runtime.dimensions} or left out.`,
      { param: 'dimensions' },
    );
  }
  const inputs = eachText(request.input);
  // One input given bare (a string or one token array) is `input`; inputs in a list are `input[i]`.
  const single = typeof request.input === 'string' || typeof request.input[0] === 'number';
  const lease = await runtime.slots.acquire(call.signal, call.accountId);
  const watchdog = new StallWatchdog(runtime.timeouts, runtime.name);
  try {
    const context = lease.slot;
    const prepared = inputs.map((input, index) => {
      const param = single ? 'input' : `input[${index}]`;
      const evaluated = typeof input === 'string' ? input : checkedTokens(input, runtime.vocabularySize, param);
      const length = context.calculateInputLength(evaluated);
      if (length >= runtime.contextSize) throw inputTooLong(runtime.contextSize, length, param);
      return { evaluated, length };
    });
    const list: EmbeddingList = { object: 'list', data: [], model: request.model };
    let tokens = 0;
    for (const { evaluated, length } of prepared) {
      if (call.signal.aborted) throw cancelled();
      const vector = await embedOne(context, evaluated, watchdog);
      watchdog.progress();
      list.data.push({ object: 'embedding', index: list.data.length, embedding: normalized(vector) });
      tokens += length;
    }
    list.usage = { prompt_tokens: tokens, total_tokens: tokens };
    return { list };
  } finally {
    await watchdog.returnSlot(lease);
  }
}

async function embedOne(
  context: LlamaEmbeddingContext,
  input: string | Token[],
  watchdog: StallWatchdog,
): Promise<readonly number[]> {
  try {
    return (await watchdog.guard(context.getEmbeddingFor(input))).vector;
  } catch (error) {
    if (error instanceof ApiError) throw error;
    throw apiError(
      'local_generation_failed',
      `The local model failed while embedding: ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  }
}

function checkedTokens(tokens: number[], vocabularySize: number, param: string): Token[] {
  const outside = tokens.findIndex((token) => token >= vocabularySize);
  if (outside !== -1) {
    throw apiError(
      'invalid_value',
      `Invalid '${param}[${outside}]': ${tokens[outside]} is not a token id of this model (0 to ${vocabularySize - 1}).`,
      { param: `${param}[${outside}]` },
    );
  }
  return tokens as Token[];
}

function inputTooLong(contextSize: number, length: number, param: string): ApiError {
  return apiError(
    'context_length_exceeded',
    `This model's maximum context length is ${contextSize} tokens, however you requested ${length} tokens in '${param}'. Please reduce the length of the input.`,
    { param },
  );
}

/** The vector scaled to length 1 (a zero vector stays as it is). */
function normalized(vector: readonly number[]): number[] {
  let sum = 0;
  for (const value of vector) sum += value * value;
  const length = Math.sqrt(sum);
  return length === 0 ? [...vector] : vector.map((value) => value / length);
}
