import { z } from 'zod';
import { authorizeAccount } from '../../access/account-access.js';
import { allowedModels } from '../../access/policy.js';
import { findKeyById } from '../../db/repositories/api-keys.js';
import { ApiError, apiError } from '../../errors/api-error.js';
import { isWellFormedKey } from '../../keys/format.js';
import {
  createKey,
  findKeyByValue,
  listKeys,
  revokeKey,
  rotateKey,
  setKeyLimits,
  toKeyInfo,
} from '../../keys/service.js';
import { defineRoute } from './route.js';
import { accountParams, apiKeySchema, createdKeySchema, keyParams, limitsSchema, rotatedKeySchema } from './schemas.js';
import type { ManagementServices } from './services.js';

/**
 * An account's API keys. Creation and rotation return the key once; every change goes through keys/service.ts,
 * which records it on the access-change feed, so every node's data plane sees it within the poll interval (this
 * node at once, through onAccessChanged).
 */

const maximumGraceSeconds = 30 * 86_400;

async function requireKeyOfAccount(services: ManagementServices, accountId: string, keyId: string) {
  const key = await findKeyById(services.database.db, keyId);
  // Another account's key is "not found" too: key ids must not be probeable across accounts.
  if (!key || key.account_id !== accountId) throw apiError('key_not_found', `no key with id "${keyId.slice(0, 64)}"`);
  return key;
}

export const keyRoutes = [
  defineRoute({
    method: 'GET',
    path: '/api/accounts/:accountId/keys',
    tag: 'Keys',
    summary: "The account's keys, newest first (display form only, never the key)",
    auth: 'user',
    access: 'account-member',
    params: accountParams,
    response: z.array(apiKeySchema),
    handle: async ({ caller, params, services }) => {
      const { account } = await authorizeAccount(services.database.db, caller, params.accountId, 'read');
      return listKeys(services.database.db, account.id);
    },
  }),

  defineRoute({
    method: 'POST',
    path: '/api/accounts/:accountId/keys',
    tag: 'Keys',
    summary: 'Create a key; the response holds the key, which is never shown again',
    auth: 'user',
    access: 'account-member',
    params: accountParams,
    body: z.strictObject({
      name: z.string().max(100).describe('what the key is for: the application and environment it serves'),
      environment: z.string().max(50).optional().describe('a label such as production or staging'),
      models: z
        .array(z.string().min(1).max(256))
        .max(1000)
        .optional()
        .describe("narrows the account's models; omit for all of them"),
      expiresAt: z.iso.datetime({ offset: true }).optional().describe('omit for a key that does not expire'),
    }),
    response: createdKeySchema,
    status: 201,
    handle: async ({ caller, params, body, services }) => {
      const db = services.database.db;
      const { account } = await authorizeAccount(db, caller, params.accountId, 'manage-keys');
      let models: string[] | undefined;
      if (body.models !== undefined && !body.models.includes('*')) {
        const permitted = new Set(
          allowedModels(services.catalog, JSON.parse(account.allowed_models) as string[], null),
        );
        for (const model of body.models) {
          if (!permitted.has(model.trim())) {
            throw apiError('model_not_allowed', `this account may not use the model "${model.slice(0, 100)}"`, {
              param: 'models',
            });
          }
        }
        if (body.models.length === 0)
          throw apiError('invalid_request', 'give at least one model, or omit models', { param: 'models' });
        models = body.models;
      }
      const expiresInMs = body.expiresAt === undefined ? undefined : Date.parse(body.expiresAt) - Date.now();
      if (expiresInMs !== undefined && expiresInMs <= 0)
        throw apiError('invalid_request', 'expiresAt must be in the future', { param: 'expiresAt' });
      const created = await createKey(db, services.secret, {
        account: account.id,
        name: body.name,
        environment: body.environment,
        models,
        expiresInMs,
      });
      services.onAccessChanged();
      return { key: created.key, ...created.info };
    },
  }),

  defineRoute({
    method: 'GET',
    path: '/api/accounts/:accountId/keys/:keyId',
    tag: 'Keys',
    summary: 'One key (display form only)',
    auth: 'user',
    access: 'account-member',
    params: keyParams,
    response: apiKeySchema,
    handle: async ({ caller, params, services }) => {
      await authorizeAccount(services.database.db, caller, params.accountId, 'read');
      return toKeyInfo(await requireKeyOfAccount(services, params.accountId, params.keyId));
    },
  }),

  defineRoute({
    method: 'POST',
    path: '/api/accounts/:accountId/keys/:keyId/rotate',
    tag: 'Keys',
    summary: 'Rotate: issue a successor key (returned once); the old key keeps working for the grace period',
    description: 'An exposed key should be rotated with gracePeriodSeconds 0: it stops working at once.',
    auth: 'user',
    access: 'account-member',
    params: keyParams,
    body: z.strictObject({
      gracePeriodSeconds: z
        .number()
        .int()
        .min(0)
        .max(maximumGraceSeconds)
        .describe('how long the old key stays valid; 0 = it stops now'),
    }),
    response: rotatedKeySchema,
    handle: async ({ caller, params, body, services }) => {
      const db = services.database.db;
      await authorizeAccount(db, caller, params.accountId, 'manage-keys');
      const key = await requireKeyOfAccount(services, params.accountId, params.keyId);
      const { created, previous } = await rotateKey(db, services.secret, key.id, body.gracePeriodSeconds * 1000);
      services.onAccessChanged();
      return { key: created.key, ...created.info, previous };
    },
  }),

  defineRoute({
    method: 'POST',
    path: '/api/accounts/:accountId/keys/:keyId/revoke',
    tag: 'Keys',
    summary: 'Revoke a key at once, on every node (idempotent)',
    auth: 'user',
    access: 'account-member',
    params: keyParams,
    response: apiKeySchema,
    handle: async ({ caller, params, services }) => {
      const db = services.database.db;
      await authorizeAccount(db, caller, params.accountId, 'manage-keys');
      const key = await requireKeyOfAccount(services, params.accountId, params.keyId);
      const revoked = await revokeKey(db, key.id);
      services.onAccessChanged();
      return revoked;
    },
  }),

  defineRoute({
    method: 'POST',
    path: '/api/keys/revoke',
    tag: 'Keys',
    summary: 'Revoke a key by its value (a leaked key, as found), at once, on every node',
    description:
      'For whoever has the key but not its id. The key is only hashed to find it, never stored or echoed. A key of ' +
      'an account the caller cannot manage is reported as not found, like a key that does not exist.',
    auth: 'user',
    access: 'signed-in',
    body: z.strictObject({ key: z.string().max(200).describe('the API key, sk-sb-…') }),
    response: apiKeySchema,
    handle: async ({ caller, body, services }) => {
      const db = services.database.db;
      const value = body.key.trim();
      if (!isWellFormedKey(value)) {
        throw apiError(
          'invalid_key',
          'That is not a complete Switchboard key (sk-sb-…): its checksum does not match. Check for a typo or a ' +
            "cut-off copy; to revoke by id, use the key's own revoke route.",
          { param: 'key' },
        );
      }
      // Unknown, and known but of an account the caller cannot manage, get the same answer.
      const notYours = () => apiError('key_not_found', 'That key is not one of the keys you can manage.');
      const row = await findKeyByValue(db, services.secret, value);
      if (!row) throw notYours();
      try {
        await authorizeAccount(db, caller, row.account_id, 'manage-keys');
      } catch (error) {
        if (error instanceof ApiError && error.code === 'account_not_found') throw notYours();
        throw error;
      }
      const revoked = await revokeKey(db, row.id);
      services.onAccessChanged();
      return revoked;
    },
  }),

  defineRoute({
    method: 'PATCH',
    path: '/api/accounts/:accountId/keys/:keyId/limits',
    tag: 'Keys',
    summary: "Set a key's rate limits and budgets (a field left out keeps its value; null removes the limit)",
    description:
      "A key is admitted against its own limits and its account's together, so a key can only narrow what its account allows. Takes effect on every node within a second. " +
      'Owners and admins only. What an admin sets (or limits.key_defaults, where an admin set nothing) bounds the ' +
      "account's owners: they may set a lower value, never a higher one or none (403 limit_set_by_operator).",
    auth: 'user',
    access: 'account-owner',
    params: keyParams,
    body: limitsSchema.strict().refine((body) => Object.keys(body).length > 0, 'give at least one limit'),
    response: apiKeySchema,
    handle: async ({ caller, params, body, services }) => {
      const db = services.database.db;
      await authorizeAccount(db, caller, params.accountId, 'manage-limits');
      const key = await requireKeyOfAccount(services, params.accountId, params.keyId);
      const updated = await setKeyLimits(db, key.id, body, {
        by: { role: caller.admin ? 'operator' : 'owner', userId: caller.userId },
        keyDefaults: services.config.limits.keyDefaults,
      });
      services.onAccessChanged();
      return updated;
    },
  }),
];
