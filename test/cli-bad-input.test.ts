import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliResult, runCli, runCliJson } from './support/cli.js';
import { killStrayServes, prepareServe, type ServeFiles } from './support/serve-process.js';

/**
 * What an operator's mistakes on the command line get: a short message naming the problem, a non-zero exit code, no
 * stack trace, and the database as it was. The happy paths are in cli.test.ts.
 */
let files: ServeFiles;

beforeAll(async () => {
  files = await prepareServe({
    config: {
      providers: [{ name: 'local', type: 'openai', base_url: 'http://127.0.0.1:9/v1' }],
      models: [{ name: 'small', provider: 'local' }],
    },
  });
  await files.cli('accounts', 'create', 'acme');
});

afterAll(killStrayServes);

const withConfig = (...args: string[]) => [...args, '--config', files.configFile];

function expectRefused(result: CliResult, message: string): void {
  expect(result.code).not.toBe(0);
  expect(result.stderr).toContain(message);
  expect(result.stderr).not.toMatch(/^\s+at /m);
  expect(result.stdout).toBe('');
}

describe('switchboard CLI on bad input', () => {
  it('says why a command failed as JSON on stderr under --json, as its output would be', async () => {
    for (const args of [
      withConfig('keys', 'rotate', 'key_nope', '--json'),
      withConfig('keys', 'create', '--name', 'no-account', '--json'),
      withConfig('accounts', 'set-models', 'acme', ' ', '--json'),
    ]) {
      const result = await runCli(args);
      expect(result.code).not.toBe(0);
      expect(result.stdout).toBe('');
      const lines = result.stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(JSON.parse(lines[0] as string)).toEqual({ error: { message: expect.any(String) } });
    }
    expect(JSON.parse((await runCli(withConfig('keys', 'rotate', 'key_nope', '--json'))).stderr)).toEqual({
      error: { message: 'no key with id "key_nope"' },
    });
    expectRefused(await runCli(withConfig('keys', 'rotate', 'key_nope')), 'switchboard: no key with id "key_nope"');
  });

  it('refuses a log filter on an endpoint the gateway has none of, naming the ones it has', async () => {
    expectRefused(
      await runCli(withConfig('logs', '--account', 'acme', '--endpoint', 'chat')),
      "argument 'chat' is invalid. Allowed choices are chat_completions, models, model, responses",
    );
    const rows = await runCliJson<unknown[]>(withConfig('logs', '--account', 'acme', '--endpoint', 'count_tokens'));
    expect(rows).toEqual([]);
  });

  it('refuses a key lifetime or grace period past any printable date, and stores nothing', async () => {
    const keysOfAcme = () =>
      runCliJson<Array<{ id: string; expiresAt: string | null }>>(withConfig('keys', 'list', '--account', 'acme'));
    expectRefused(
      await runCli(withConfig('keys', 'create', '--account', 'acme', '--name', 'far', '--expires-in', '99999999d')),
      'a key lifetime (omit it for a key that never expires) is at most 100 years',
    );
    expect(await keysOfAcme()).toEqual([]);

    const { id } = await runCliJson<{ id: string }>(withConfig('keys', 'create', '--account', 'acme', '--name', 'web'));
    expectRefused(
      await runCli(withConfig('keys', 'rotate', id, '--grace', '99999999d')),
      'a grace period is at most 100 years',
    );
    const [key, ...others] = await keysOfAcme();
    expect(others).toEqual([]);
    expect(key).toMatchObject({ id, expiresAt: null, status: 'active' });
  });
  it('refuses key names and environments with control characters or past their length, and stores nothing', async () => {
    const keysOfAcme = () => runCliJson<Array<{ name: string }>>(withConfig('keys', 'list', '--account', 'acme'));
    const before = await keysOfAcme();
    for (const name of ['web\nprod', 'web\u001b[2Jprod', 'tab\there']) {
      expectRefused(
        await runCli(withConfig('keys', 'create', '--account', 'acme', '--name', name)),
        'a key name is 1-100 characters, none of them control characters',
      );
    }
    for (const environment of ['prod\r\nuction', 'x'.repeat(51)]) {
      expectRefused(
        await runCli(withConfig('keys', 'create', '--account', 'acme', '--name', 'web', '--environment', environment)),
        'an environment label is at most 50 characters, none of them control characters',
      );
    }
    expect(await keysOfAcme()).toEqual(before);
  });
  it('refuses an empty model list (an unset shell variable) instead of a key or account that may call nothing', async () => {
    const keysOfAcme = () => runCliJson<Array<{ name: string }>>(withConfig('keys', 'list', '--account', 'acme'));
    const before = await keysOfAcme();
    for (const list of ['', ' , ']) {
      expectRefused(
        await runCli(withConfig('keys', 'create', '--account', 'acme', '--name', 'none', '--models', list)),
        '--models names no model',
      );
      expectRefused(
        await runCli(withConfig('accounts', 'create', 'empty', '--models', list)),
        '--models names no model',
      );
      expectRefused(await runCli(withConfig('accounts', 'set-models', 'acme', list)), 'the model list names no model');
    }
    expect(await keysOfAcme()).toEqual(before);
    const accounts = await runCliJson<Array<{ name: string; models: string[] }>>(withConfig('accounts', 'list'));
    expect(accounts.map((account) => account.name)).not.toContain('empty');
    expect(accounts.find((account) => account.name === 'acme')?.models).not.toEqual([]);
  });
  it('refuses an empty --data-dir, --config or --host (an unset shell variable) instead of using the current directory, defaults or every interface', async () => {
    const cwd = mkdtempSync(path.join(tmpdir(), 'switchboard-cli-cwd-'));
    try {
      const env = { SWITCHBOARD_CONFIG: '', SWITCHBOARD_DATABASE_URL: '' };
      for (const [args, flag] of [
        [['accounts', 'create', 'acme', '--data-dir', ''], '--data-dir'],
        [['accounts', 'list', '--config', ' '], '--config'],
        [['serve', '--host', '', '--data-dir', cwd], '--host'],
      ] as const) {
        expectRefused(await runCli([...args], { cwd, env }), `switchboard: ${flag} is empty`);
      }
      expect(readdirSync(cwd)).toEqual([]);
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
  });
  it('takes limits as plain decimals, naming the flag, and changes no limit when one is refused', async () => {
    const limitsOfAcme = async () =>
      (await runCliJson<Array<{ limits: unknown }>>(withConfig('accounts', 'list')))[0]?.limits;
    const before = await limitsOfAcme();
    for (const [flag, text] of [
      ['--rpm', '0x10'],
      ['--rpm', '1e30'],
      ['--tpm', '99999999999999999999'],
      ['--concurrency', '-1'],
      ['--concurrency', '1.5'],
    ] as const) {
      expectRefused(
        await runCli(withConfig('accounts', 'set-limits', 'acme', '--daily-budget', '5', flag, text)),
        `${flag} "${text}" is not a whole number from 1 to ${Number.MAX_SAFE_INTEGER}, or "none"`,
      );
    }
    for (const text of ['-5', '1e3', 'Infinity', '$5']) {
      expectRefused(
        await runCli(withConfig('accounts', 'set-limits', 'acme', '--rpm', '60', '--monthly-budget', text)),
        `--monthly-budget "${text}" is not an amount of US dollars`,
      );
    }
    expect(await limitsOfAcme()).toEqual(before);
    const set = await runCliJson<{ limits: unknown }>(
      withConfig('accounts', 'set-limits', 'acme', '--rpm', '60', '--daily-budget', '2.50', '--tpm', 'none'),
    );
    expect(set.limits).toEqual({ requestsPerMinute: 60, dailyBudgetUsd: 2.5, tokensPerMinute: null });
  });
});

describe('switchboard CLI on a database it cannot use', () => {
  const directories: string[] = [];
  afterAll(() => {
    for (const directory of directories) rmSync(directory, { recursive: true, force: true });
  });

  /** A data directory of its own, on SQLite whatever the test project (no configuration file is found from it). */
  async function sqliteDataDir(): Promise<{
    dataDir: string;
    file: string;
    run: (...args: string[]) => Promise<CliResult>;
  }> {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'switchboard-cli-db-'));
    directories.push(dataDir);
    const env = { SWITCHBOARD_CONFIG: '', SWITCHBOARD_DATABASE_URL: '' };
    const run = (...args: string[]) => runCli([...args, '--data-dir', dataDir], { cwd: dataDir, env });
    return { dataDir, file: path.join(dataDir, 'switchboard.db'), run };
  }

  it('names a switchboard.db that is not a database, and leaves its bytes alone', async () => {
    const { file, run } = await sqliteDataDir();
    const garbage = Buffer.from('these bytes are no SQLite header, only an operator mistake\n'.repeat(100));
    writeFileSync(file, garbage);
    expectRefused(
      await run('accounts', 'create', 'acme'),
      `cannot use the SQLite database at ${file}: the file is not a SQLite database`,
    );
    expect(readFileSync(file).equals(garbage)).toBe(true);
  });

  it('says a database from a newer Switchboard is newer, and does not touch it', async () => {
    const { file, run } = await sqliteDataDir();
    expect((await run('accounts', 'create', 'acme')).code).toBe(0);
    const sqlite = new SqliteDatabase(file);
    sqlite.prepare("insert into kysely_migration (name, timestamp) values ('9999-from-the-future', '2099')").run();
    sqlite.close();
    expectRefused(
      await run('accounts', 'create', 'other'),
      'it was written by a newer version of Switchboard (schema migration 9999-from-the-future is unknown',
    );
    const after = new SqliteDatabase(file, { readonly: true });
    expect(after.prepare('select name from accounts').all()).toEqual([{ name: 'acme' }]);
    after.close();
  });

  it('says what a locked database means instead of a bare "database is locked"', async () => {
    const { file, run } = await sqliteDataDir();
    expect((await run('accounts', 'create', 'acme')).code).toBe(0);
    const holder = new SqliteDatabase(file);
    holder.exec('begin immediate');
    try {
      expectRefused(
        await run('accounts', 'create', 'other'),
        'database is locked: another process has held a write transaction for over 5 s',
      );
    } finally {
      holder.exec('rollback');
      holder.close();
    }
    expect((await run('accounts', 'list', '--json')).stdout).not.toContain('other');
  });
});
