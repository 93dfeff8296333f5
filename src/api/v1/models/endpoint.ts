import type { ModelCatalog } from '../../../access/policy.js';
import { lookupEndpoint } from '../pipeline/lookup-endpoint.js';

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

export function createModelsEndpoints(catalog: ModelCatalog, created: number) {
  const listModels = lookupEndpoint(
    'models',
    () => ({}),
    async (_request, exchange) => ({
      object: 'list',
      data: exchange.principal.models.map((name) => modelObject(catalog, name, created)),
    }),
  );

  const retrieveModel = lookupEndpoint<{ model: string }>(
    'model',
    ({ params }) => ({ model: params.id ?? '' }),
    async (request) => modelObject(catalog, request.model, created),
  );

  return { listModels, retrieveModel };
}
