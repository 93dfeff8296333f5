import { textCharacters } from '../../../openai/synthesize-text-stream.js';
import type { TextCompletionRequest } from '../../../openai/text-completion-types.js';
import { readUsage, toWireUsage } from '../../../usage/usage.js';
import type { Exchange, Outcome } from '../pipeline/endpoint.js';
import { runOperation } from '../pipeline/exchange-dispatch.js';
import { sendJson } from '../pipeline/json-answer.js';
import { textCompletionOperation } from './operation.js';
import { estimateTextUsage } from './usage.js';

/** A legacy text completion answered as one JSON body: the upstream's own bytes when nothing in them must change. */
export async function completeText(
  request: TextCompletionRequest,
  body: Buffer | undefined,
  exchange: Exchange,
): Promise<Outcome> {
  const result = await runOperation(exchange, textCompletionOperation(request, body));
  const completion = result.completion;
  const reported = readUsage(completion.usage);
  const usage = reported ?? estimateTextUsage(request, textCharacters(completion));
  let payload: Buffer | string | undefined = result.raw;
  if (!reported) {
    completion.usage = toWireUsage(usage);
    payload = undefined;
  }
  payload ??= JSON.stringify(completion);
  return { usage, responseBody: sendJson(exchange, payload) };
}
