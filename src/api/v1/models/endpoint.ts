import type { ServerResponse } from 'node:http';
import type { ModelCatalog } from '../../../access/policy.js';
import { renderOpenAiError } from '../../../errors/render-openai.js';
import { answered, type Endpoint } from '../pipeline/endpoint.js';

/**
 * GET /v1/models and GET /v1/models/{id}: exactly the models the key may call. The list is the principal's `models`,
 * computed by access/policy.ts, the same function that authorizes every other request (the pipeline refuses a
 * retrieve of a model the key may not call with the same 404 as an unknown one).
 */

/**
 * `created` must be a stable integer; models have no creation date of their own, so the catalog's load time serves.
 * `capabilities` is Switchboard's own member (clients ignore members they do not know): what the model may be used
 * for, so a client can tell embedding models from chat models.
 */
function modelObject(catalog: ModelCatalog, name: string, created: number) {
  const model = catalog.byName.get(name);
  return {
    id: name,
    object: 'model' as const,
    created,
    owned_by: model?.ownedBy ?? 'switchboard',
    capabilities: model?.capabilities ?? ['chat'],
  };
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

export function createModelsEndpoints(catalog: ModelCatalog, created: number) {
  const listModels: Endpoint = {
    name: 'models',
    readsBody: false,
    dispatches: false,
    renderError: renderOpenAiError,
    parse: () => ({}),
    async handle(_request, exchange) {
      sendJson(exchange.response, exchange.requestId, {
        object: 'list',
        data: exchange.principal.models.map((name) => modelObject(catalog, name, created)),
      });
      return answered;
    },
  };

  const retrieveModel: Endpoint<{ model: string }> = {
    name: 'model',
    readsBody: false,
    dispatches: false,
    renderError: renderOpenAiError,
    parse: ({ params }) => ({ model: params.id ?? '' }),
    async handle(request, exchange) {
      sendJson(exchange.response, exchange.requestId, modelObject(catalog, request.model, created));
      return answered;
    },
  };

  return { listModels, retrieveModel };
}
