import { z } from 'zod';
import { authorizeAccount, requireAdmin } from '../../access/account-access.js';
import { allowedModels } from '../../access/policy.js';
import type { ModelConfig } from '../../config/schema.js';
import { defineRoute } from './route.js';
import { type AdminModelView, accountParams, adminModelSchema, type ModelView, modelSchema } from './schemas.js';
import type { ManagementServices } from './services.js';

/**
 * The models an account may call, from access/policy.ts `allowedModels`: the same function that builds /v1/models
 * and authorizes chat requests, so this page can never list a model the account's keys would be refused.
 */

function view(services: ManagementServices, model: ModelConfig): ModelView {
  const provider = services.config.providers.find((candidate) => candidate.name === model.provider);
  return {
    id: model.name,
    provider: model.provider,
    providerType: provider?.type ?? 'unknown',
    ownedBy: model.ownedBy,
    contextWindow: model.contextWindow ?? null,
    pricing: model.pricing ?? null,
  };
}

export const modelRoutes = [
  defineRoute({
    method: 'GET',
    path: '/api/accounts/:accountId/models',
    tag: 'Models',
    summary: "The models the account may call (what its keys see at /v1/models, before any key's own narrowing)",
    auth: 'user',
    access: 'account-member',
    params: accountParams,
    response: z.array(modelSchema),
    handle: async ({ caller, params, services }) => {
      const { account } = await authorizeAccount(services.database.db, caller, params.accountId, 'read');
      const names = allowedModels(services.catalog, JSON.parse(account.allowed_models) as string[], null);
      return names.flatMap((name) => {
        const model = services.catalog.byName.get(name);
        return model ? [view(services, model)] : [];
      });
    },
  }),

  defineRoute({
    method: 'GET',
    path: '/api/models',
    tag: 'Models',
    summary: 'Every configured model, with its upstream name (admin)',
    auth: 'user',
    access: 'admin',
    response: z.array(adminModelSchema),
    handle: async ({ caller, services }): Promise<AdminModelView[]> => {
      requireAdmin(caller);
      return services.catalog.names.flatMap((name) => {
        const model = services.catalog.byName.get(name);
        return model ? [{ ...view(services, model), upstreamModel: model.upstreamModel }] : [];
      });
    },
  }),
];
