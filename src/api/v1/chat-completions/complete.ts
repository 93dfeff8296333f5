import { generatedCharacters } from '../../../openai/normalize-chunk.js';
import type { ChatCompletionRequest } from '../../../openai/types.js';
import { estimatePromptCharacters, estimateUsage, readUsage, toWireUsage } from '../../../usage/usage.js';
import { announceDroppedParameters } from '../pipeline/dropped-parameters.js';
import type { Exchange, Outcome } from '../pipeline/endpoint.js';
import { sendJson } from '../pipeline/json-answer.js';

/** A chat completion answered as one JSON body: the upstream's own bytes when nothing in them must change. */
export async function completeChat(
  request: ChatCompletionRequest,
  body: Buffer | undefined,
  exchange: Exchange,
): Promise<Outcome> {
  const { services, response, trace } = exchange;
  const result = await services.dispatcher.complete(
    request,
    exchange.signal,
    trace,
    exchange.principal.accountId,
    body,
  );
  const reported = readUsage(result.usage ?? result.completion.usage);
  // An upstream that reports no usage is logged with an estimate, marked as such, never as zero; and the client gets
  // that estimate too, never a missing usage.
  const usage = reported ?? estimateUsage(estimatePromptCharacters(request), generatedCharacters(result.completion));
  let payload: Buffer | string | undefined = result.raw;
  if (!reported) {
    result.completion.usage = toWireUsage(usage);
    payload = undefined;
  }
  payload ??= JSON.stringify(result.completion);
  announceDroppedParameters(response, trace);
  return { usage, responseBody: sendJson(exchange, payload) };
}
