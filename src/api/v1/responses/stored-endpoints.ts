import type { EndpointRequest } from '../pipeline/endpoint.js';
import { lookupEndpoint } from '../pipeline/lookup-endpoint.js';
import {
  conversationTooLarge,
  responseInProgress,
  responseNotFound,
  responseNotStored,
  responseStopped,
} from './errors.js';
import { type ListQuery, pageItems, parseListQuery } from './list-items.js';
import { inputItemsOf } from './stored-items.js';

/**
 * GET /v1/responses/{id}, DELETE /v1/responses/{id} and GET /v1/responses/{id}/input_items: the account's stored
 * responses. Another account's response, a deleted or expired one and one never stored are the same 404; one answered
 * but too large to store is a 404 too, saying so (and deleting it forgets it).
 */

interface StoredRequest extends EndpointRequest {
  id: string;
}

interface ListRequest extends StoredRequest {
  list: ListQuery;
}

export const retrieveResponseEndpoint = lookupEndpoint<StoredRequest>(
  'responses_retrieve',
  ({ params }) => ({ id: params.id ?? '' }),
  async (request, exchange) => {
    const found = await exchange.services.responses.find(exchange.principal.accountId, request.id);
    if (!found) throw responseNotFound(request.id);
    if (found.unstored) throw responseNotStored(request.id, found.unstored.bytes, found.unstored.limitBytes);
    return found.response;
  },
);

export const deleteResponseEndpoint = lookupEndpoint<StoredRequest>(
  'responses_delete',
  ({ params }) => ({ id: params.id ?? '' }),
  async (request, exchange) => {
    const deleted = await exchange.services.responses.delete(exchange.principal.accountId, request.id);
    if (!deleted) throw responseNotFound(request.id);
    return { id: request.id, object: 'response.deleted', deleted: true };
  },
);

export const responseInputItemsEndpoint = lookupEndpoint<ListRequest>(
  'responses_input_items',
  ({ params, query }) => ({ id: params.id ?? '', list: parseListQuery(new URLSearchParams(query)) }),
  async (request, exchange) => {
    const conversation = await exchange.services.responses.conversation(exchange.principal.accountId, request.id);
    // The walk starts from the response asked for: absent means not the account's, deleted, expired or never stored.
    if (!conversation || conversation.responseIds.at(-1) !== request.id) throw responseNotFound(request.id);
    const { tooLarge, unstored } = conversation;
    if (unstored) throw responseNotStored(request.id, unstored.bytes, unstored.limitBytes);
    if (conversation.inProgress) throw responseInProgress(request.id, 'response_id');
    if (conversation.stopped) throw responseStopped(request.id);
    if (tooLarge)
      throw conversationTooLarge(tooLarge.bytes, exchange.services.responses.maxConversationBytes, 'response_id');
    return pageItems(inputItemsOf(conversation), request.list);
  },
);
