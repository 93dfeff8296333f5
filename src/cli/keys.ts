import { Command } from 'commander';
import { parseDuration } from '../config/units.js';
import { findAccountById } from '../db/repositories/accounts.js';
import {
  type ApiKeyInfo,
  type CreatedKey,
  createKey,
  listKeys,
  requireKeyByIdOrValue,
  revokeKey,
  rotateKey,
  setKeyLimits,
} from '../keys/service.js';
import { type CommonOptions, withCommonOptions, withContext } from './context.js';
import { describeLimits, type LimitFlags, limitChangeFromFlags, withLimitOptions } from './limit-options.js';
import { modelList, type Output, printJson, printTable } from './output.js';

function durationOption(text: string, flag: string): number {
  const milliseconds = parseDuration(text);
  if (milliseconds === undefined) throw new Error(`${flag} "${text}" is not a duration (e.g. 12h, 30d, 90m)`);
  return milliseconds;
}

function printCreated(output: Output, created: CreatedKey, accountName: string, extra?: string): void {
  if (output.json) {
    printJson(output, { key: created.key, ...created.info });
    return;
  }
  output.write(
    [
      `Created key ${created.info.id} "${created.info.name}" for account ${accountName}${created.info.expiresAt ? `, expires ${created.info.expiresAt}` : ''}.`,
      '',
      `    ${created.key}`,
      '',
      'Copy it now: it is shown only this once and cannot be recovered.',
      ...(extra ? [extra] : []),
    ].join('\n'),
  );
}

function keyRow(key: ApiKeyInfo): string[] {
  return [
    key.id,
    key.name,
    key.environment ?? '',
    key.display,
    key.status,
    key.models === null ? '(account)' : key.models.join(','),
    key.createdAt,
    key.lastUsedAt ?? 'never',
    key.expiresAt ?? 'never',
    describeLimits(key.limits),
  ];
}

export function keysCommand(): Command {
  const keys = new Command('keys').description('manage API keys');

  withCommonOptions(
    keys
      .command('create')
      .description('create a key (printed once)')
      .requiredOption('--account <name>', 'the account that owns the key')
      .requiredOption('--name <app>', 'what the key is for, e.g. the application and environment')
      .option('--environment <label>', 'environment label, e.g. production')
      .option('--models <list>', "comma-separated models, narrowing the account's")
      .option('--expires-in <duration>', 'lifetime, e.g. 30d'),
  ).action(
    async (
      options: CommonOptions & {
        account: string;
        name: string;
        environment?: string;
        models?: string;
        expiresIn?: string;
      },
    ) => {
      const expiresInMs =
        options.expiresIn === undefined ? undefined : durationOption(options.expiresIn, '--expires-in');
      await withContext(options, async (context) => {
        const created = await createKey(context.database.db, context.secret(), {
          account: options.account,
          name: options.name,
          environment: options.environment,
          models: options.models === undefined ? undefined : modelList(options.models),
          expiresInMs,
        });
        printCreated(context.output, created, options.account);
      });
    },
  );

  withCommonOptions(
    keys.command('list').description("list an account's keys").requiredOption('--account <name>', 'account name'),
  ).action(async (options: CommonOptions & { account: string }) => {
    await withContext(options, async ({ database, output }) => {
      const list = await listKeys(database.db, options.account);
      if (output.json) return printJson(output, list);
      printTable(
        output,
        ['ID', 'NAME', 'ENV', 'KEY', 'STATUS', 'MODELS', 'CREATED', 'LAST USED', 'EXPIRES', 'LIMITS'],
        list.map(keyRow),
      );
    });
  });

  withCommonOptions(
    keys
      .command('revoke <keyIdOrKey>')
      .description('revoke a key at once, on every server: give its id, or the key itself (sk-sb-…) as found'),
  ).action(async (keyIdOrKey: string, options: CommonOptions) => {
    await withContext(options, async (context) => {
      const row = await requireKeyByIdOrValue(context.database.db, context.secret(), keyIdOrKey);
      const key = await revokeKey(context.database.db, row.id);
      if (context.output.json) return printJson(context.output, key);
      context.output.write(
        `Revoked ${key.id} (${key.display}, "${key.name}", account ${key.accountId}) at ${key.revokedAt}.`,
      );
    });
  });

  withCommonOptions(
    keys
      .command('rotate <keyId>')
      .description('issue a successor key; the old one keeps working for the grace period')
      .option('--grace <duration>', 'how long the old key stays valid (0 = stop it now, for an exposed key)', '0'),
  ).action(async (keyId: string, options: CommonOptions & { grace: string }) => {
    const graceMs = durationOption(options.grace, '--grace');
    await withContext(options, async (context) => {
      const { created, previous } = await rotateKey(context.database.db, context.secret(), keyId, graceMs);
      if (context.output.json) return printJson(context.output, { key: created.key, ...created.info, previous });
      const account = await findAccountById(context.database.db, created.info.accountId);
      printCreated(
        context.output,
        created,
        account?.name ?? created.info.accountId,
        graceMs > 0
          ? `The old key ${previous.id} (${previous.display}) keeps working until ${previous.expiresAt}.`
          : `The old key ${previous.id} (${previous.display}) no longer works.`,
      );
    });
  });

  withCommonOptions(
    withLimitOptions(
      keys
        .command('set-limits <keyId>')
        .description('set rate limits and budgets of a key ("none" removes one; unset ones keep their value)'),
    ),
  ).action(async (keyId: string, options: CommonOptions & LimitFlags) => {
    const change = limitChangeFromFlags(options);
    await withContext(options, async ({ database, output }) => {
      const key = await setKeyLimits(database.db, keyId, change);
      if (output.json) {
        printJson(output, key);
        return;
      }
      output.write(`Limits of ${key.id} ("${key.name}"): ${describeLimits(key.limits)}.`);
    });
  });

  return keys;
}
