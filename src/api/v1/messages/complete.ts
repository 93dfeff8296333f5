import type { MessagesRequest } from '../../../providers/anthropic/wire-types.js';
import { estimatedUsage, estimateUsage, readUsage, type TokenUsage, toWireUsage } from '../../../usage/usage.js';
import { announceDroppedParameters } from '../pipeline/dropped-parameters.js';
import type { Exchange, Outcome } from '../pipeline/endpoint.js';
import { runOperation } from '../pipeline/exchange-dispatch.js';
import { sendJson } from '../pipeline/json-answer.js';
import { toAnthropicUsage } from './anthropic-usage.js';
import { estimateInputTokens } from './count-tokens.js';
import { fromChatCompletion } from './from-chat-completion.js';
import { nativeMessageUsage, withMessageUsage } from './native-usage.js';
import { type ClientMessage, messagesOperation } from './operation.js';

/**
 * A Messages request answered as one JSON body: an Anthropic upstream's answer byte for byte (its usage read on the
 * way), or a chat completion translated into a message. Usage an upstream did not report is estimated, marked as
 * such, and given to the client in the message too: never a missing or zero count.
 */
export async function completeMessage(client: ClientMessage, exchange: Exchange): Promise<Outcome> {
  const { response, trace } = exchange;
  const answer = await runOperation(exchange, messagesOperation(client));
  let payload: Buffer | string;
  let usage: TokenUsage;
  if (answer.kind === 'forwarded') {
    payload = answer.body;
    const reported = nativeMessageUsage(answer.body);
    usage = reported ?? estimateMessageUsage(client.request, forwardedCharacters(answer.body));
    // Usage the upstream got wrong (a negative count): the client sees the estimate the log keeps instead.
    if (!reported) payload = withMessageUsage(answer.body, toAnthropicUsage(toWireUsage(usage)));
  } else {
    const { completion } = answer.result;
    const reported = readUsage(answer.result.usage ?? completion.usage);
    const message = fromChatCompletion(completion, {
      model: client.request.model,
      stopSequences: client.request.stop_sequences,
    });
    usage = reported ?? estimateMessageUsage(client.request, generatedCharacters(message.content));
    if (!reported) message.usage = toAnthropicUsage(toWireUsage(usage));
    payload = JSON.stringify(message);
  }
  announceDroppedParameters(response, trace);
  return { usage, responseBody: sendJson(exchange, payload, 'anthropic') };
}

/** The gateway's estimate of a request's usage (marked as an estimate): the prompt, and what was generated. */
export function estimateMessageUsage(request: MessagesRequest, completionCharacters: number): TokenUsage {
  const completionTokens = completionCharacters > 0 ? estimateUsage(0, completionCharacters).completionTokens : 0;
  return estimatedUsage(estimateInputTokens(request), completionTokens);
}

function generatedCharacters(content: ReadonlyArray<Record<string, unknown>>): number {
  let characters = 0;
  for (const block of content) {
    if (typeof block.text === 'string') characters += block.text.length;
    else if (typeof block.thinking === 'string') characters += block.thinking.length;
    else if (block.input !== undefined) characters += JSON.stringify(block.input).length;
  }
  return characters;
}

/** The characters a Messages JSON answer generated (text, thinking, tool input), for an estimate of its usage. */
function forwardedCharacters(body: Buffer): number {
  try {
    const content = (JSON.parse(body.toString('utf8')) as { content?: unknown }).content;
    return Array.isArray(content)
      ? generatedCharacters(content.filter((block) => block && typeof block === 'object'))
      : 0;
  } catch {
    return 0;
  }
}
