import type { ServerResponse } from 'node:http';
import { renderOpenAiError } from '../../../errors/render-openai.js';
import { answered, type Endpoint, type EndpointRequest } from '../pipeline/endpoint.js';
import { responseNotFound } from './errors.js';
import { type ListQuery, pageItems, parseListQuery } from './list-items.js';
import { inputItemsOf } from './stored-items.js';
import { storedResponseObject } from './stored-response.js';

/**
 * GET /v1/responses/{id}, DELETE /v1/responses/{id} and GET /v1/responses/{id}/input_items: the account's stored
 * responses. Another account's response, a deleted or expired one and one never stored are the same 404.
 */

interface StoredRequest extends EndpointRequest {
  id: string;
}

interface ListRequest extends StoredRequest {
  list: ListQuery;
}

function sendJson(response: ServerResponse, requestId: string, body: unknown): void {
  const text = JSON.stringify(body);
  response.writeHead(200, {
    'x-request-id': requestId,
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
  });
  response.end(text);
}

export const retrieveResponseEndpoint: Endpoint<StoredRequest> = {
  name: 'responses_retrieve',
  readsBody: false,
  dispatches: false,
  renderError: renderOpenAiError,
  parse: ({ params }) => ({ id: params.id ?? '' }),
  async handle(request, exchange) {
    const found = await exchange.services.responses.find(exchange.principal.accountId, request.id);
    if (!found) throw responseNotFound(request.id);
    sendJson(exchange.response, exchange.requestId, storedResponseObject(found));
    return answered;
  },
};

export const deleteResponseEndpoint: Endpoint<StoredRequest> = {
  name: 'responses_delete',
  readsBody: false,
  dispatches: false,
  renderError: renderOpenAiError,
  parse: ({ params }) => ({ id: params.id ?? '' }),
  async handle(request, exchange) {
    const deleted = await exchange.services.responses.delete(exchange.principal.accountId, request.id);
    if (!deleted) throw responseNotFound(request.id);
    sendJson(exchange.response, exchange.requestId, { id: request.id, object: 'response.deleted', deleted: true });
    return answered;
  },
};

export const responseInputItemsEndpoint: Endpoint<ListRequest> = {
  name: 'responses_input_items',
  readsBody: false,
  dispatches: false,
  renderError: renderOpenAiError,
  parse: ({ params, query }) => ({ id: params.id ?? '', list: parseListQuery(new URLSearchParams(query)) }),
  async handle(request, exchange) {
    const conversation = await exchange.services.responses.conversation(exchange.principal.accountId, request.id);
    // The walk starts from the response asked for: absent means not the account's, deleted, expired or never stored.
    if (!conversation || conversation.responseIds.at(-1) !== request.id) throw responseNotFound(request.id);
    sendJson(exchange.response, exchange.requestId, pageItems(inputItemsOf(conversation), request.list));
    return answered;
  },
};
