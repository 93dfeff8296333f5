import { z } from 'zod';
import { authorizeAccount } from '../../access/account-access.js';
import { createManagementToken, listManagementTokens, revokeManagementToken } from '../../users/management-tokens.js';
import { defineRoute } from './route.js';
import { createdManagementTokenSchema, managementTokenSchema } from './schemas.js';

/**
 * A user's management tokens, for scripts. Only a console session can list, create or revoke them: a token cannot
 * mint more tokens, so a leaked one cannot entrench itself.
 */

export const tokenRoutes = [
  defineRoute({
    method: 'GET',
    path: '/api/tokens',
    tag: 'Management tokens',
    summary: "The signed-in user's management tokens (display form only)",
    auth: 'session',
    access: 'signed-in',
    response: z.array(managementTokenSchema),
    handle: async ({ caller, services }) => listManagementTokens(services.database.db, caller.userId),
  }),

  defineRoute({
    method: 'POST',
    path: '/api/tokens',
    tag: 'Management tokens',
    summary: 'Create a management token; the response holds it, which is never shown again',
    description: 'Use it as "Authorization: Bearer <token>" on /api. It acts as you, narrowed to accountId if given.',
    auth: 'session',
    access: 'signed-in',
    body: z.strictObject({
      name: z.string().max(100),
      accountId: z.string().min(1).max(100).optional().describe('narrow the token to one account'),
      expiresInDays: z.number().int().min(1).max(3650).optional().describe('omit for a token that does not expire'),
    }),
    response: createdManagementTokenSchema,
    status: 201,
    handle: async ({ caller, body, services }) => {
      const db = services.database.db;
      if (body.accountId !== undefined) await authorizeAccount(db, caller, body.accountId, 'read');
      const { token, info } = await createManagementToken(db, {
        userId: caller.userId,
        name: body.name,
        accountId: body.accountId,
        expiresInMs: body.expiresInDays === undefined ? undefined : body.expiresInDays * 86_400_000,
      });
      return { token, ...info };
    },
  }),

  defineRoute({
    method: 'DELETE',
    path: '/api/tokens/:tokenId',
    tag: 'Management tokens',
    summary: 'Revoke one of your management tokens',
    auth: 'session',
    access: 'signed-in',
    params: z.strictObject({ tokenId: z.string().min(1).max(100) }),
    response: managementTokenSchema,
    handle: async ({ caller, params, services }) =>
      revokeManagementToken(services.database.db, caller.userId, params.tokenId),
  }),
];
