import { z } from 'zod';
import { authorizeAccount, requireAdmin } from '../../access/account-access.js';
import {
  createAccount,
  setAccountFlags,
  setAccountLimits,
  setAccountModels,
  toAccount,
} from '../../accounts/service.js';
import { listAccounts } from '../../db/repositories/accounts.js';
import { listMembershipsOfUser } from '../../db/repositories/users.js';
import { apiError } from '../../errors/api-error.js';
import type { Role } from '../../users/service.js';
import { defineRoute } from './route.js';
import { type AccountView, accountParams, accountSchema, limitsSchema } from './schemas.js';
import type { ManagementServices } from './services.js';

/** Accounts: every member reads their own; only admins create accounts and set their terms. */

function view(row: Parameters<typeof toAccount>[0], role: Role | null): AccountView {
  return { ...toAccount(row), role };
}

/** Model names an admin may give an account: configured ones, or "*". Unknown names are refused, not stored. */
function checkModels(services: ManagementServices, models: readonly string[]): void {
  for (const model of models) {
    if (model !== '*' && !services.catalog.byName.has(model.trim())) {
      throw apiError('model_not_configured', `"${model.slice(0, 100)}" is not a configured model`, { param: 'models' });
    }
  }
}

const modelList = z.array(z.string().min(1).max(256)).max(1000);

export const accountRoutes = [
  defineRoute({
    method: 'GET',
    path: '/api/accounts',
    tag: 'Accounts',
    summary: 'The accounts the caller may act on (an admin: all of them)',
    auth: 'user',
    access: 'signed-in',
    response: z.array(accountSchema),
    handle: async ({ caller, services }) => {
      const db = services.database.db;
      const memberships = await listMembershipsOfUser(db, caller.userId);
      const roles = new Map(memberships.map((membership) => [membership.account_id, membership.role as Role]));
      const all = await listAccounts(db);
      return all
        .filter((account) => caller.accountScope === null || account.id === caller.accountScope)
        .filter((account) => caller.admin || roles.has(account.id))
        .map((account) => view(account, roles.get(account.id) ?? null));
    },
  }),

  defineRoute({
    method: 'POST',
    path: '/api/accounts',
    tag: 'Accounts',
    summary: 'Create an account (admin)',
    auth: 'user',
    access: 'admin',
    body: z.strictObject({
      name: z.string().max(64),
      models: modelList.optional().describe('default ["*"]: every configured model'),
      logBodies: z.boolean().optional(),
    }),
    response: accountSchema,
    status: 201,
    handle: async ({ caller, body, services }) => {
      requireAdmin(caller);
      if (body.models) checkModels(services, body.models);
      const db = services.database.db;
      const account = await createAccount(db, { name: body.name, models: body.models });
      if (body.logBodies) return { ...(await setAccountFlags(db, account.id, { logBodies: true })), role: null };
      return { ...account, role: null };
    },
  }),

  defineRoute({
    method: 'GET',
    path: '/api/accounts/:accountId',
    tag: 'Accounts',
    summary: 'One account',
    auth: 'user',
    access: 'account-member',
    params: accountParams,
    response: accountSchema,
    handle: async ({ caller, params, services }) => {
      const { account, role } = await authorizeAccount(services.database.db, caller, params.accountId, 'read');
      return view(account, role);
    },
  }),

  defineRoute({
    method: 'PATCH',
    path: '/api/accounts/:accountId',
    tag: 'Accounts',
    summary:
      "Change an account's models, limits and budgets, disable or enable it, turn body logging on or off (admin)",
    description: 'Takes effect on the data plane within keys.change_poll_interval on every node.',
    auth: 'user',
    access: 'admin',
    params: accountParams,
    body: z
      .strictObject({
        models: modelList.optional(),
        disabled: z.boolean().optional(),
        logBodies: z.boolean().optional(),
        limits: limitsSchema.strict().optional(),
      })
      .refine((body) => Object.keys(body).length > 0, 'give at least one of models, disabled, logBodies, limits'),
    response: accountSchema,
    handle: async ({ caller, params, body, services }) => {
      const db = services.database.db;
      const { account, role } = await authorizeAccount(db, caller, params.accountId, 'configure');
      if (body.models) {
        checkModels(services, body.models);
        await setAccountModels(db, account.id, body.models);
      }
      if (body.disabled !== undefined || body.logBodies !== undefined) {
        await setAccountFlags(db, account.id, { disabled: body.disabled, logBodies: body.logBodies });
      }
      if (body.limits) await setAccountLimits(db, account.id, body.limits);
      services.onAccessChanged();
      const { account: updated } = await authorizeAccount(db, caller, account.id, 'read');
      return view(updated, role);
    },
  }),
];
