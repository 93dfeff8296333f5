import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isWellFormedKey } from '../src/keys/format.js';
import { createRequestLogBatchWriter } from '../src/request-log/batch-writer.js';
import { ensurePartitions } from '../src/request-log/retention.js';
import { RowBatch } from '../src/request-log/row-batch.js';
import type { RequestLogInsert } from '../src/request-log/row-layout.js';
import { runCli, runCliJson } from './support/cli.js';
import { successfulLogRow } from './support/request-log-rows.js';
import {
  killStrayServes,
  openServedDatabase,
  prepareServe,
  type ServeFiles,
  writeConfigFile,
} from './support/serve-process.js';

/** The files a server would run on, used by the CLI alone (no server runs in this file). */
let files: ServeFiles;

beforeAll(async () => {
  files = await prepareServe({
    config: {
      providers: [{ name: 'local', type: 'openai', base_url: 'http://127.0.0.1:9/v1' }],
      models: [
        { name: 'small', provider: 'local' },
        { name: 'large', provider: 'local' },
      ],
    },
  });
});

afterAll(killStrayServes);

const withConfig = (...args: string[]) => [...args, '--config', files.configFile];

describe('switchboard CLI', () => {
  it('creates, lists and changes accounts', async () => {
    const created = await runCliJson<{ name: string; models: string[] }>(
      withConfig('accounts', 'create', 'acme', '--models', 'small'),
    );
    expect(created).toMatchObject({ name: 'acme', models: ['small'] });
    const updated = await runCliJson<{ models: string[] }>(
      withConfig('accounts', 'set-models', 'acme', 'small, large'),
    );
    expect(updated.models).toEqual(['small', 'large']);
    const list = await runCliJson<Array<{ name: string }>>(withConfig('accounts', 'list'));
    expect(list.map((account) => account.name)).toEqual(['acme']);
    const duplicate = await runCli(withConfig('accounts', 'create', 'acme'));
    expect(duplicate.code).not.toBe(0);
    expect(duplicate.stderr).toContain('already exists');
  });

  it('creates a key once, lists it without the secret, rotates and revokes it', async () => {
    const created = await runCliJson<{ key: string; id: string; expiresAt: string }>(
      withConfig('keys', 'create', '--account', 'acme', '--name', 'web', '--expires-in', '30d', '--models', 'small'),
    );
    expect(isWellFormedKey(created.key)).toBe(true);
    expect(Date.parse(created.expiresAt) - Date.now()).toBeGreaterThan(29 * 86_400_000);

    const human = await runCli(withConfig('keys', 'list', '--account', 'acme'));
    expect(human.stdout).toContain(`sk-sb-…${created.key.slice(-4)}`);
    expect(human.stdout).not.toContain(created.key);

    const rotated = await runCliJson<{ key: string; id: string; previous: { expiresAt: string; status: string } }>(
      withConfig('keys', 'rotate', created.id, '--grace', '24h'),
    );
    expect(rotated.key).not.toBe(created.key);
    expect(Date.parse(rotated.previous.expiresAt) - Date.now()).toBeGreaterThan(23 * 3_600_000);
    // Said to a person, the account is named as `keys create` names it, not by its id.
    const told = await runCli(withConfig('keys', 'rotate', rotated.id, '--grace', '1h'));
    expect(told.stdout).toContain('for account acme');

    const revoked = await runCliJson<{ status: string }>(withConfig('keys', 'revoke', rotated.id));
    expect(revoked.status).toBe('revoked');
    const list = await runCliJson<Array<{ id: string; status: string; models: string[] }>>(
      withConfig('keys', 'list', '--account', 'acme'),
    );
    expect(list.find((key) => key.id === rotated.id)?.status).toBe('revoked');
    expect(list.find((key) => key.id === created.id)?.status).toBe('expiring');
    expect(list.find((key) => key.id === rotated.id)?.models).toEqual(['small']);
    expect(JSON.stringify(list)).not.toContain(created.key);
  });

  it('explains bad input instead of crashing', async () => {
    const missingAccount = await runCli(withConfig('keys', 'create', '--account', 'ghost', '--name', 'x'));
    expect(missingAccount.code).not.toBe(0);
    expect(missingAccount.stderr).toContain('no account named "ghost"');
    const badDuration = await runCli(
      withConfig('keys', 'create', '--account', 'acme', '--name', 'x', '--expires-in', 'soon'),
    );
    expect(badDuration.stderr).toContain('--expires-in "soon" is not a duration');
    const unknownKey = await runCli(withConfig('keys', 'revoke', 'key_nope'));
    expect(unknownKey.stderr).toContain('no key with id "key_nope"');
  });

  it("shows an account's log (empty at first)", async () => {
    expect(await runCliJson(withConfig('logs', '--account', 'acme', '--limit', '5'))).toEqual([]);
    expect((await runCli(withConfig('logs', '--account', 'acme'))).stdout).toContain('(none)');
  });

  it("filters the log by endpoint and shows each row's endpoint", async () => {
    const [account] = await runCliJson<Array<{ id: string }>>(withConfig('accounts', 'list'));
    const handle = await openServedDatabase(files);
    try {
      const now = Date.now();
      if (handle.dialect === 'postgres') await ensurePartitions(handle.db, now);
      const endpoints = ['chat_completions', 'models', 'chat_completions', 'model', null];
      const rows: RequestLogInsert[] = endpoints.map((endpoint, index) =>
        successfulLogRow({
          request_id: `req_cli_${index}`,
          created_at: now - 1000 + index,
          account_id: account?.id ?? '',
          key_id: 'key_cli',
          key_name: 'cli',
          model: 'small',
          endpoint,
        }),
      );
      await createRequestLogBatchWriter(handle)(RowBatch.of(rows));
    } finally {
      await handle.close();
    }
    const chat = await runCliJson<Array<{ requestId: string; endpoint: string | null }>>(
      withConfig('logs', '--account', 'acme', '--endpoint', 'chat_completions'),
    );
    expect(chat).toEqual([
      expect.objectContaining({ requestId: 'req_cli_2', endpoint: 'chat_completions' }),
      expect.objectContaining({ requestId: 'req_cli_0', endpoint: 'chat_completions' }),
    ]);
    const all = await runCliJson<Array<{ endpoint: string | null }>>(withConfig('logs', '--account', 'acme'));
    expect(all.map((entry) => entry.endpoint)).toEqual([
      null,
      'model',
      'chat_completions',
      'models',
      'chat_completions',
    ]);
    const table = (await runCli(withConfig('logs', '--account', 'acme', '--endpoint', 'models'))).stdout;
    expect(table).toContain('ENDPOINT');
    expect(table).toContain('req_cli_1');
    expect(table).not.toContain('req_cli_0');
  });

  it('rebuilds the usage rollups from the log', async () => {
    const rolledUp = async () => {
      const handle = await openServedDatabase(files);
      try {
        const hourly = await handle.db
          .selectFrom('usage_hourly')
          .select((select) => select.fn.sum<number>('requests').as('requests'))
          .executeTakeFirst();
        const daily = await handle.db
          .selectFrom('usage_daily')
          .select((select) => select.fn.sum<number>('requests').as('requests'))
          .executeTakeFirst();
        return [Number(hourly?.requests ?? 0), Number(daily?.requests ?? 0)];
      } finally {
        await handle.close();
      }
    };
    // The rows the previous test logged; then the rollups are lost (a restore of the log alone, say).
    expect(await rolledUp()).toEqual([5, 5]);
    const handle = await openServedDatabase(files);
    await handle.db.deleteFrom('usage_hourly').execute();
    await handle.db.deleteFrom('usage_daily').execute();
    await handle.close();
    expect(await rolledUp()).toEqual([0, 0]);
    const result = await runCliJson<{ hourlyRows: number; dailyRows: number }>(withConfig('usage', 'rebuild-rollups'));
    expect(result.hourlyRows).toBeGreaterThanOrEqual(1);
    expect(await rolledUp()).toEqual([5, 5]);
    const human = await runCli(withConfig('usage', 'rebuild-rollups', '--from', 'yesterday'));
    expect(human.stderr).toContain('--from is an ISO 8601 time');
  });

  it('config check validates the file and names the bad field', async () => {
    const ok = await runCliJson<{ ok: boolean; models: unknown[] }>(withConfig('config', 'check'));
    expect(ok.ok).toBe(true);
    expect(ok.models).toHaveLength(2);
    const bad = writeConfigFile(path.join(files.dataDir, 'bad.yaml'), {
      server: { port: 99999 },
      providers: [{ name: 'x', type: 'openai', base_url: 'http://h/v1', api_key: '${NOT_SET_ANYWHERE_123}' }],
    });
    const result = await runCli(['config', 'check', '--config', bad], { env: { NOT_SET_ANYWHERE_123: '' } });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('providers[0].api_key: environment variable NOT_SET_ANYWHERE_123 is not set');
    const bad2 = writeConfigFile(path.join(files.dataDir, 'bad2.yaml'), { server: { port: 99999 } });
    const result2 = await runCli(['config', 'check', '--config', bad2]);
    expect(result2.stderr).toMatch(/server\.port: .*65535/);
  });

  it('serve refuses to start on a bad file, naming the field', async () => {
    const bad = writeConfigFile(path.join(files.dataDir, 'bad3.yaml'), {
      models: [{ name: 'a', provider: 'nowhere' }],
    });
    const result = await runCli(['serve', '--config', bad]);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('models[0].provider: unknown provider "nowhere"');
  });
});
