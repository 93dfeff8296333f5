import { z } from 'zod';
import { requireAdmin } from '../../access/account-access.js';
import type { Role } from '../../users/service.js';
import { createUser, listAllUsers, requireUser, setUserFlags } from '../../users/service.js';
import { defineRoute } from './route.js';
import { type UserWithMemberships, userWithMembershipsSchema } from './schemas.js';
import type { ManagementServices } from './services.js';

/** Users (admin): list with memberships, create, make admin, disable. Account owners invite through members.ts. */

async function withMemberships(services: ManagementServices, userIds?: readonly string[]) {
  let query = services.database.db
    .selectFrom('memberships')
    .innerJoin('accounts', 'accounts.id', 'memberships.account_id')
    .select([
      'memberships.user_id',
      'memberships.account_id',
      'accounts.name as account_name',
      'accounts.disabled as account_disabled',
      'memberships.role',
    ])
    .orderBy('accounts.name');
  if (userIds) query = query.where('memberships.user_id', 'in', userIds);
  const rows = await query.execute();
  const byUser = new Map<string, UserWithMemberships['memberships']>();
  for (const row of rows) {
    const list = byUser.get(row.user_id) ?? [];
    list.push({
      accountId: row.account_id,
      accountName: row.account_name,
      role: row.role as Role,
      accountDisabled: row.account_disabled === 1,
    });
    byUser.set(row.user_id, list);
  }
  return byUser;
}

const userParams = z.strictObject({ userId: z.string().min(1).max(100) });

export const userRoutes = [
  defineRoute({
    method: 'GET',
    path: '/api/users',
    tag: 'Users',
    summary: 'Every user with their memberships (admin)',
    auth: 'user',
    access: 'admin',
    response: z.array(userWithMembershipsSchema),
    handle: async ({ caller, services }) => {
      requireAdmin(caller);
      const users = await listAllUsers(services.database.db);
      const memberships = await withMemberships(services);
      return users.map((user) => ({ ...user, memberships: memberships.get(user.id) ?? [] }));
    },
  }),

  defineRoute({
    method: 'POST',
    path: '/api/users',
    tag: 'Users',
    summary: 'Create a user with a password (admin); to add people to an account, invite them instead',
    auth: 'user',
    access: 'admin',
    body: z.strictObject({
      email: z.string().max(320),
      password: z.string().max(4096),
      admin: z.boolean().optional(),
    }),
    response: userWithMembershipsSchema,
    status: 201,
    handle: async ({ caller, body, services }) => {
      requireAdmin(caller);
      const user = await createUser(services.database.db, body);
      return { ...user, memberships: [] };
    },
  }),

  defineRoute({
    method: 'PATCH',
    path: '/api/users/:userId',
    tag: 'Users',
    summary: 'Make a user admin or not, disable or enable them (admin); the last active admin stays',
    description:
      'Disabling a user ends their sessions and revokes their management tokens; enabling them again revives ' +
      'neither (they sign in anew and make new tokens), so a copied cookie or token stays dead. Making admin a login ' +
      "that an account owner's invitation created (createdByInvitation) is refused with 409 " +
      'login_created_by_invitation unless confirmInvitedLogin is true.',
    auth: 'user',
    access: 'admin',
    params: userParams,
    body: z
      .strictObject({
        admin: z.boolean().optional(),
        disabled: z.boolean().optional(),
        confirmInvitedLogin: z
          .boolean()
          .optional()
          .describe("true: you checked who holds a login an account owner's invitation created"),
      })
      .refine((body) => body.admin !== undefined || body.disabled !== undefined, 'give admin or disabled'),
    response: userWithMembershipsSchema,
    handle: async ({ caller, params, body, services }) => {
      requireAdmin(caller);
      const db = services.database.db;
      const row = await requireUser(db, params.userId);
      const user = await setUserFlags(
        db,
        row.id,
        { admin: body.admin, disabled: body.disabled },
        {
          confirmInvitedLogin: body.confirmInvitedLogin === true,
          howToConfirm: 'confirm it (confirmInvitedLogin: true)',
        },
      );
      return { ...user, memberships: (await withMemberships(services, [row.id])).get(row.id) ?? [] };
    },
  }),
];
