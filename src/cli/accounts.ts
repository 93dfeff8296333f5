import { Command } from 'commander';
import {
  type Account,
  createAccount,
  listAllAccounts,
  setAccountFlags,
  setAccountLimits,
  setAccountModels,
} from '../accounts/service.js';
import { type CommonOptions, withCommonOptions, withContext } from './context.js';
import { describeLimits, type LimitFlags, limitChangeFromFlags, withLimitOptions } from './limit-options.js';
import { modelList, type Output, printJson, printTable } from './output.js';

function printAccount(output: Output, account: Account, verb: string): void {
  if (output.json) {
    printJson(output, account);
    return;
  }
  output.write(
    `${verb} account ${account.name} (${account.id}); models: ${account.models.join(', ') || '(none)'}${account.disabled ? '; DISABLED' : ''}`,
  );
}

export function accountsCommand(): Command {
  const accounts = new Command('accounts').description('manage accounts (the tenants that own keys and a request log)');

  withCommonOptions(
    accounts
      .command('create <name>')
      .description('create an account')
      .option('--models <list>', 'comma-separated models it may call (default: all configured models, "*")'),
  ).action(async (name: string, options: CommonOptions & { models?: string }) => {
    await withContext(options, async ({ database, output }) => {
      const account = await createAccount(database.db, {
        name,
        models: options.models === undefined ? undefined : modelList(options.models),
      });
      printAccount(output, account, 'Created');
    });
  });

  withCommonOptions(accounts.command('list').description('list accounts')).action(async (options: CommonOptions) => {
    await withContext(options, async ({ database, output }) => {
      const list = await listAllAccounts(database.db);
      if (output.json) return printJson(output, list);
      printTable(
        output,
        ['NAME', 'ID', 'MODELS', 'STATUS', 'LIMITS', 'BODY LOGGING', 'CREATED'],
        list.map((account) => [
          account.name,
          account.id,
          account.models.join(','),
          account.disabled ? 'disabled' : 'active',
          describeLimits(account.limits),
          account.logBodies ? 'on' : 'off',
          account.createdAt,
        ]),
      );
    });
  });

  withCommonOptions(
    accounts.command('set-models <name> <models>').description('replace the models an account may call ("*" = all)'),
  ).action(async (name: string, models: string, options: CommonOptions) => {
    await withContext(options, async ({ database, output }) => {
      printAccount(output, await setAccountModels(database.db, name, modelList(models, 'the model list')), 'Updated');
    });
  });

  withCommonOptions(accounts.command('disable <name>').description('refuse every key of the account')).action(
    async (name: string, options: CommonOptions) => {
      await withContext(options, async ({ database, output }) => {
        printAccount(output, await setAccountFlags(database.db, name, { disabled: true }), 'Disabled');
      });
    },
  );

  withCommonOptions(accounts.command('enable <name>').description("accept the account's keys again")).action(
    async (name: string, options: CommonOptions) => {
      await withContext(options, async ({ database, output }) => {
        printAccount(output, await setAccountFlags(database.db, name, { disabled: false }), 'Enabled');
      });
    },
  );

  withCommonOptions(
    accounts
      .command('set-body-logging <name> <on|off>')
      .description("keep request and response bodies in the account's request log (off by default)"),
  ).action(async (name: string, state: string, options: CommonOptions) => {
    if (state !== 'on' && state !== 'off') throw new Error('body logging is "on" or "off"');
    await withContext(options, async ({ database, output }) => {
      const account = await setAccountFlags(database.db, name, { logBodies: state === 'on' });
      if (output.json) return printJson(output, account);
      output.write(`Body logging for ${account.name} is ${account.logBodies ? 'on' : 'off'}.`);
    });
  });

  withCommonOptions(
    withLimitOptions(
      accounts
        .command('set-limits <name>')
        .description('set rate limits and budgets of an account ("none" removes one; unset ones keep their value)'),
    ),
  ).action(async (name: string, options: CommonOptions & LimitFlags) => {
    const change = limitChangeFromFlags(options);
    await withContext(options, async ({ database, output }) => {
      const account = await setAccountLimits(database.db, name, change);
      if (output.json) {
        printJson(output, account);
        return;
      }
      output.write(`Limits of ${account.name}: ${describeLimits(account.limits)}.`);
    });
  });

  return accounts;
}
