import type { ServerResponse } from 'node:http';
import { type RecordedRequest, sleep } from './mock-server.js';

/**
 * The OpenAI-compatible mock's legacy `/completions`, as OpenAI answers it (`object: "text_completion"`, `choices[]`
 * with `text`, `logprobs` of `tokens`/`token_logprobs`/`top_logprobs`/`text_offset`, `finish_reason`; streamed as
 * chunks of the same object, then a usage chunk with `choices: []` when `stream_options.include_usage`, then
 * `[DONE]`). The mock's tokens are whitespace-led words; the completion of a prompt is " Echo: <prompt>", cut at
 * max_tokens (default 16, as OpenAI's); `echo` puts the prompt (and its logprobs, the first one null) before it.
 * `no-usage` reports no usage; `midstream-reset` streams two chunks, then drops the connection.
 */

/** The mock's tokens of a text: each word with the whitespace before it. */
export function mockTokens(text: string): string[] {
  return text.match(/\s*\S+|\s+$/g) ?? [];
}

/** The logprob the mock gives the token at this position of a text (prompt and completion counted together). */
export const mockLogprob = (position: number): number => -((position % 9) + 1) / 10;

function promptsOf(prompt: unknown): string[] {
  if (typeof prompt === 'string') return [prompt];
  if (!Array.isArray(prompt)) return [];
  if (typeof prompt[0] === 'number') return [`[${prompt.length} tokens]`];
  return prompt.map((item) => (typeof item === 'string' ? item : `[${(item as unknown[]).length} tokens]`));
}

interface Choice {
  text: string;
  index: number;
  logprobs: Logprobs | null;
  finish_reason: string;
}

interface Logprobs {
  tokens: string[];
  token_logprobs: Array<number | null>;
  top_logprobs: Array<Record<string, number> | null>;
  text_offset: number[];
}

function logprobsOf(tokens: string[], firstPosition: number, firstOffset: number, top: number, echoed: boolean) {
  const result: Logprobs = { tokens: [], token_logprobs: [], top_logprobs: [], text_offset: [] };
  let offset = firstOffset;
  tokens.forEach((token, index) => {
    const position = firstPosition + index;
    // OpenAI has nothing to condition the first prompt token on.
    const first = echoed && position === 0;
    const logprob = mockLogprob(position);
    result.tokens.push(token);
    result.token_logprobs.push(first ? null : logprob);
    const alternatives: Record<string, number> = { [token]: logprob, ' maybe': logprob - 1, ' perhaps': logprob - 2 };
    result.top_logprobs.push(first ? null : Object.fromEntries(Object.entries(alternatives).slice(0, top)));
    result.text_offset.push(offset);
    offset += token.length;
  });
  return result;
}

function choicesFor(body: Record<string, unknown>) {
  const prompts = promptsOf(body.prompt);
  const n = typeof body.n === 'number' ? body.n : 1;
  const maxTokens = typeof body.max_tokens === 'number' ? body.max_tokens : 16;
  const echo = body.echo === true;
  const top = typeof body.logprobs === 'number' ? body.logprobs : undefined;
  const choices: Choice[] = [];
  let promptTokens = 0;
  let completionTokens = 0;
  prompts.forEach((prompt, promptIndex) => {
    const promptPieces = mockTokens(prompt);
    promptTokens += promptPieces.length;
    const answer = mockTokens(` Echo: ${prompt}`);
    const generated = answer.slice(0, maxTokens);
    for (let copy = 0; copy < n; copy++) {
      completionTokens += generated.length;
      const pieces = echo ? [...promptPieces, ...generated] : generated;
      choices.push({
        text: pieces.join(''),
        index: promptIndex * n + copy,
        logprobs: top === undefined ? null : logprobsOf(pieces, echo ? 0 : promptPieces.length, 0, top, echo),
        finish_reason: generated.length < answer.length ? 'length' : 'stop',
      });
    }
  });
  return {
    choices,
    usage: {
      prompt_tokens: promptTokens,
      completion_tokens: completionTokens,
      total_tokens: promptTokens + completionTokens,
    },
  };
}

export async function answerTextCompletion(request: RecordedRequest, response: ServerResponse): Promise<void> {
  const body = request.body;
  const model = String(body.model);
  const { choices, usage } = choicesFor(body);
  const base = { id: 'cmpl-mock123', object: 'text_completion', created: 1_700_000_000, model };
  if (body.stream !== true) {
    const answer: Record<string, unknown> = { ...base, choices, system_fingerprint: 'fp_mock' };
    if (model !== 'no-usage') answer.usage = usage;
    const text = JSON.stringify(answer);
    response.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    response.end(text);
    return;
  }
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const send = (chunk: Record<string, unknown>) => response.write(`data: ${JSON.stringify({ ...base, ...chunk })}\n\n`);
  let sent = 0;
  for (const choice of choices) {
    const pieces = choice.logprobs?.tokens ?? mockTokens(choice.text);
    for (const [position, piece] of pieces.entries()) {
      if (model === 'midstream-reset') {
        // Paced, so what was sent reaches the gateway before the connection drops.
        if (sent === 2) {
          response.socket?.destroy();
          return;
        }
        await sleep(30);
      }
      sent++;
      const logprobs = choice.logprobs && {
        tokens: [piece],
        token_logprobs: [choice.logprobs.token_logprobs[position] ?? null],
        top_logprobs: [choice.logprobs.top_logprobs[position] ?? null],
        text_offset: [choice.logprobs.text_offset[position] ?? 0],
      };
      send({ choices: [{ text: piece, index: choice.index, logprobs: logprobs ?? null, finish_reason: null }] });
    }
    send({ choices: [{ text: '', index: choice.index, logprobs: null, finish_reason: choice.finish_reason }] });
  }
  const streamOptions = body.stream_options as { include_usage?: boolean } | undefined;
  if (streamOptions?.include_usage === true && model !== 'no-usage') send({ choices: [], usage });
  response.write('data: [DONE]\n\n');
  response.end();
}
