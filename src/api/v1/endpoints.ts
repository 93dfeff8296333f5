import type { ModelCatalog } from '../../access/policy.js';
import { chatCompletionsEndpoint } from './chat-completions/endpoint.js';
import { completionsEndpoint } from './completions/endpoint.js';
import { embeddingsEndpoint } from './embeddings/endpoint.js';
import { countTokensEndpoint, messagesEndpoint } from './messages/endpoint.js';
import { createModelsEndpoints } from './models/endpoint.js';
import { RouteTable } from './pipeline/route-table.js';
import { responsesEndpoint } from './responses/endpoint.js';
import {
  deleteResponseEndpoint,
  responseInputItemsEndpoint,
  retrieveResponseEndpoint,
} from './responses/stored-endpoints.js';

/** Every /v1 endpoint, by path and method. A new endpoint is one line here (see docs/architecture.md). */
export function createRouteTable(catalog: ModelCatalog, modelsCreated: number): RouteTable {
  const models = createModelsEndpoints(catalog, modelsCreated);
  return new RouteTable()
    .add('/v1/chat/completions', { POST: chatCompletionsEndpoint })
    .add('/v1/completions', { POST: completionsEndpoint })
    .add('/v1/embeddings', { POST: embeddingsEndpoint })
    .add('/v1/responses', { POST: responsesEndpoint })
    .add('/v1/responses/:id', { GET: retrieveResponseEndpoint, DELETE: deleteResponseEndpoint })
    .add('/v1/responses/:id/input_items', { GET: responseInputItemsEndpoint })
    .add('/v1/messages', { POST: messagesEndpoint })
    .add('/v1/messages/count_tokens', { POST: countTokensEndpoint })
    .add('/v1/models', { GET: models.listModels })
    .add('/v1/models/*id', { GET: models.retrieveModel });
}
