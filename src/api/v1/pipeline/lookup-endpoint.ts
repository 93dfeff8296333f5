import { renderOpenAiError } from '../../../errors/render-openai.js';
import {
  answered,
  type Endpoint,
  type EndpointName,
  type EndpointRequest,
  type Exchange,
  type RequestInput,
} from './endpoint.js';
import { sendJson } from './json-answer.js';

/**
 * An OpenAI endpoint that reads no body and calls no model (`/v1/models`, stored responses): `lookup` finds the
 * object to answer with, or throws the ApiError to render. Its answer is not logged: it is the account's own data.
 */
export function lookupEndpoint<Request extends EndpointRequest>(
  name: EndpointName,
  parse: (input: RequestInput) => Request,
  lookup: (request: Request, exchange: Exchange) => Promise<unknown>,
): Endpoint<Request> {
  return {
    name,
    readsBody: false,
    dispatches: false,
    renderError: renderOpenAiError,
    parse,
    async handle(request, exchange) {
      sendJson(exchange, JSON.stringify(await lookup(request, exchange)));
      return answered;
    },
  };
}
