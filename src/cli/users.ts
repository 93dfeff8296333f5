import { Command } from 'commander';
import { listAllAccounts, requireAccount } from '../accounts/service.js';
import { listMembershipsOfUser } from '../db/repositories/users.js';
import { createInvitation, invitationPath } from '../users/invitations.js';
import { deleteUser, renameUser } from '../users/login-changes.js';
import { changePassword, describePasswordChange } from '../users/password-change.js';
import {
  addMember,
  createUser,
  listAllUsers,
  parseRole,
  requireUser,
  setUserFlags,
  type User,
} from '../users/service.js';
import { type CommonOptions, withCommonOptions, withContext } from './context.js';
import { type Output, printJson, printTable } from './output.js';
import { readNewPassword } from './read-password.js';

/** Console users: the operator creates the first admin here, and can invite, reset passwords, disable, rename, delete. */

function parseSwitch(value: string, what: string): boolean {
  if (value === 'on') return true;
  if (value === 'off') return false;
  throw new Error(`${what} is "on" or "off"`);
}

function printUser(output: Output, user: User, verb: string): void {
  if (output.json) {
    printJson(output, user);
    return;
  }
  output.write(
    `${verb} user ${user.email} (${user.id})${user.admin ? ', admin' : ''}${user.disabled ? ', DISABLED' : ''}.`,
  );
}

export function usersCommand(): Command {
  const users = new Command('users').description('manage console users (operators and account members)');

  withCommonOptions(
    users
      .command('create <email>')
      .description('create a user; the password is prompted for, or read from the first line of stdin')
      .option('--admin', 'an operator: may manage every account and user')
      .option('--account <name>', 'also make the user a member of this account')
      .option('--role <role>', 'role in --account: owner or member', 'owner'),
  ).action(async (email: string, options: CommonOptions & { admin?: boolean; account?: string; role: string }) => {
    const role = parseRole(options.role, '--role');
    const password = await readNewPassword();
    await withContext(options, async ({ database, output }) => {
      const user = await createUser(database.db, { email, password, admin: options.admin === true });
      if (options.account) await addMember(database.db, options.account, user.id, role);
      printUser(output, user, 'Created');
      if (!output.json && options.account) output.write(`Added to account ${options.account} as ${role}.`);
    });
  });

  withCommonOptions(users.command('list').description('list users and their accounts')).action(
    async (options: CommonOptions) => {
      await withContext(options, async ({ database, output }) => {
        const list = await listAllUsers(database.db);
        const withAccounts = await Promise.all(
          list.map(async (user) => ({
            ...user,
            memberships: (await listMembershipsOfUser(database.db, user.id)).map((membership) => ({
              account: membership.account_name,
              role: membership.role,
            })),
          })),
        );
        if (output.json) return printJson(output, withAccounts);
        const emails = new Map(list.map((user) => [user.id, user.email]));
        const accountNames = new Map(
          (await listAllAccounts(database.db)).map((account) => [account.id, account.name] as const),
        );
        printTable(
          output,
          ['EMAIL', 'ID', 'ADMIN', 'STATUS', 'ACCOUNTS', 'LAST SIGN-IN', 'UNCONFIRMED LOGIN'],
          withAccounts.map((user) => [
            user.email,
            user.id,
            user.admin ? 'yes' : '',
            user.disabled ? 'disabled' : user.hasPassword ? 'active' : 'invited',
            user.memberships.map((membership) => `${membership.account} (${membership.role})`).join(', '),
            user.lastSignInAt ?? 'never',
            user.createdByInvitation
              ? `created by an invitation to ${accountNames.get(user.createdByInvitation.accountId) ?? '?'} from ${
                  emails.get(user.createdByInvitation.invitedBy ?? '') ?? '?'
                }`
              : '',
          ]),
        );
      });
    },
  );

  withCommonOptions(
    users
      .command('invite <email>')
      .description('invite someone to an account; prints a one-time link to send them')
      .requiredOption('--account <name>', 'the account to join')
      .option('--role <role>', 'owner or member', 'member'),
  ).action(async (email: string, options: CommonOptions & { account: string; role: string }) => {
    const role = parseRole(options.role, '--role');
    await withContext(options, async ({ database, output, loaded }) => {
      const account = await requireAccount(database.db, options.account);
      const config = loaded.config;
      const { token, invitation } = await createInvitation(database.db, {
        accountId: account.id,
        email,
        role,
        createdBy: null,
        ttlMs: config.console.invitationTtlMs,
      });
      const origin = config.console.publicUrl ?? `http://${config.server.host}:${config.server.port}`;
      const link = `${origin}${invitationPath(token)}`;
      if (output.json) return printJson(output, { ...invitation, token, link });
      output.write(
        [
          `Invited ${invitation.email} to ${account.name} as ${role}; the link works once, until ${invitation.expiresAt}:`,
          '',
          `    ${link}`,
          '',
          'Send it to them: it is shown only this once.',
          ...(config.console.publicUrl ? [] : ['(Set console.public_url so links use the address people reach.)']),
        ].join('\n'),
      );
    });
  });

  withCommonOptions(
    users
      .command('set-password <email>')
      .description(
        "reset a user's password (prompted, or from stdin); signs them out everywhere and revokes their management tokens",
      ),
  ).action(async (email: string, options: CommonOptions) => {
    const password = await readNewPassword();
    await withContext(options, async ({ database, output }) => {
      const user = await requireUser(database.db, email);
      const changed = await changePassword(database.db, user, password);
      if (output.json) return printJson(output, { id: user.id, email: user.email, passwordChanged: true, ...changed });
      output.write(`Password of ${user.email} changed; ${describePasswordChange(changed)}.`);
    });
  });

  withCommonOptions(
    users
      .command('set-admin <email> <onOff>')
      .description('make a user an operator (on) or not (off)')
      .option('--confirm', "trust a login that an account owner's invitation created (you checked who holds it)"),
  ).action(async (email: string, onOff: string, options: CommonOptions & { confirm?: boolean }) => {
    const admin = parseSwitch(onOff, 'the admin switch');
    await withContext(options, async ({ database, output }) => {
      const user = await setUserFlags(
        database.db,
        email,
        { admin },
        { confirmInvitedLogin: options.confirm === true, howToConfirm: 're-run with --confirm' },
      );
      printUser(output, user, 'Updated');
    });
  });

  for (const [name, disabled] of [
    ['disable', true],
    ['enable', false],
  ] as const) {
    withCommonOptions(
      users
        .command(`${name} <email>`)
        .description(
          disabled
            ? 'stop a user from signing in: ends their sessions and revokes their management tokens, for good'
            : 'let a user sign in again (their old sessions and management tokens stay dead)',
        ),
    ).action(async (email: string, options: CommonOptions) => {
      await withContext(options, async ({ database, output }) => {
        const user = await setUserFlags(database.db, email, { disabled });
        printUser(output, user, disabled ? 'Disabled' : 'Enabled');
      });
    });
  }

  withCommonOptions(
    users
      .command('add-to-account <email>')
      .description('make an existing user a member of an account, or change their role there')
      .requiredOption('--account <name>', 'account name')
      .option('--role <role>', 'owner or member', 'member')
      .option('--confirm', "trust a login that an account owner's invitation created (you checked who holds it)"),
  ).action(async (email: string, options: CommonOptions & { account: string; role: string; confirm?: boolean }) => {
    const role = parseRole(options.role, '--role');
    await withContext(options, async ({ database, output }) => {
      const { account, user } = await addMember(database.db, options.account, email, role, {
        confirmInvitedLogin: options.confirm === true,
        howToConfirm: 're-run with --confirm',
      });
      if (output.json) return printJson(output, { userId: user.id, email: user.email, accountId: account.id, role });
      output.write(`${user.email} is now ${role} of ${account.name}.`);
    });
  });

  withCommonOptions(
    users
      .command('rename <email> <new-email>')
      .description(
        "change a login's e-mail address (checked as a new login's: folded, no look-alike letters, not taken); " +
          'ends their sessions and revokes their management tokens',
      ),
  ).action(async (email: string, newEmail: string, options: CommonOptions) => {
    await withContext(options, async ({ database, output }) => {
      const renamed = await renameUser(database.db, email, newEmail, '<new-email>');
      if (output.json) return printJson(output, renamed);
      output.write(`Renamed ${renamed.from} to ${renamed.to} (${renamed.id}); ${describePasswordChange(renamed)}.`);
    });
  });

  withCommonOptions(
    users
      .command('delete <email>')
      .description(
        'delete a login with its memberships, sessions and management tokens; refused for the last active admin ' +
          'and for the last owner of an account (disable keeps the login instead)',
      ),
  ).action(async (email: string, options: CommonOptions) => {
    await withContext(options, async ({ database, output }) => {
      const deleted = await deleteUser(database.db, email);
      if (output.json) return printJson(output, { ...deleted, deleted: true });
      output.write(`Deleted user ${deleted.email} (${deleted.id}); ${describePasswordChange(deleted)}.`);
    });
  });

  return users;
}
