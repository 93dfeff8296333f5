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
});
