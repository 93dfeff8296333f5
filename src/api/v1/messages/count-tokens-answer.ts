import { apiError } from '../../../errors/api-error.js';
import type { DispatchOperation } from '../../../routing/operation.js';
import type { Exchange, Outcome } from '../pipeline/endpoint.js';
import { runOperation } from '../pipeline/exchange-dispatch.js';
import { sendJson } from '../pipeline/json-answer.js';
import { countInputTokens, type PromptTokenCounter } from './count-tokens.js';
import { type ClientMessage, forwardCall, forwardForBody, forwards } from './operation.js';

/**
 * POST /v1/messages/count_tokens answered, never with a made-up 0: a model served by Anthropic gets Anthropic's own
 * count (the request forwarded as it came, through dispatch, so retries and fallbacks apply as to messages); a model
 * with a tokenizer of its own (the local model) is counted with it; any other gets the documented estimate
 * (count-tokens.ts). Counting generates nothing: no usage is logged.
 */

function countTokensOperation(client: ClientMessage): DispatchOperation<Buffer> {
  return {
    model: client.request.model,
    prepare(deployment, context) {
      const provider = deployment.provider;
      if (!forwards(provider, 'messages/count_tokens')) {
        throw apiError(
          'unsupported_endpoint',
          `The deployment ${deployment.id} cannot count tokens as Anthropic does; another deployment may.`,
          { param: 'model' },
        );
      }
      const { call, dropped } = forwardCall(client, 'messages/count_tokens', deployment, context, false);
      return { dropped, send: () => forwardForBody(provider, call) };
    },
  };
}

export async function answerCountTokens(client: ClientMessage, exchange: Exchange): Promise<Outcome> {
  const deployments = exchange.route?.deployments ?? [];
  let payload: Buffer | string;
  if (deployments.some((deployment) => forwards(deployment.provider, 'messages/count_tokens'))) {
    payload = await runOperation(exchange, countTokensOperation(client));
  } else {
    const tokenizer = deployments
      .map((deployment) => deployment.provider)
      .find((provider) => provider.countPromptTokens);
    const counter: PromptTokenCounter | undefined = tokenizer?.countPromptTokens?.bind(tokenizer);
    payload = JSON.stringify(await countInputTokens(client.request, counter));
  }
  return { responseBody: sendJson(exchange, payload, 'anthropic') };
}
