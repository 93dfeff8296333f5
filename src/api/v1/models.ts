import type { ServerResponse } from 'node:http';
import type { ModelCatalog } from '../../access/policy.js';
import { modelNotFound } from '../../errors/api-error.js';
import type { Principal } from '../../keys/authenticate.js';

/**
 * GET /v1/models and GET /v1/models/{id}: exactly the models the key may call. The list is the principal's
 * `models`, computed by access/policy.ts, the same function that authorizes chat requests.
 */

/** `created` must be a stable integer; models have no creation date of their own, so the catalog's load time serves. */
function toModelObject(catalog: ModelCatalog, name: string, created: number) {
  const model = catalog.byName.get(name);
  return { id: name, object: 'model' as const, created, owned_by: model?.ownedBy ?? 'switchboard' };
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

export function listModels(
  response: ServerResponse,
  requestId: string,
  principal: Principal,
  catalog: ModelCatalog,
  created: number,
): void {
  sendJson(response, requestId, {
    object: 'list',
    data: principal.models.map((name) => toModelObject(catalog, name, created)),
  });
}

export function retrieveModel(
  response: ServerResponse,
  requestId: string,
  principal: Principal,
  catalog: ModelCatalog,
  created: number,
  id: string,
): void {
  if (!principal.modelSet.has(id)) throw modelNotFound(id);
  sendJson(response, requestId, toModelObject(catalog, id, created));
}
