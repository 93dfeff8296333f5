import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from './support/cli.js';

/**
 * Generated command lines: every management subcommand with arguments and options drawn from what operators get
 * wrong (missing, extra, negative, fractional, huge, non-numeric, unknown names, control characters). Whatever the
 * mix, the CLI ends with a message and no stack trace, and a refused command leaves the database as it was.
 * `serve`, `models fetch` and the password prompts are left out: they listen, download or wait for a terminal.
 */
let dataDir: string;
let database: string;

const env = { SWITCHBOARD_CONFIG: '', SWITCHBOARD_DATABASE_URL: '' };
const run = (args: string[]) => runCli([...args, '--data-dir', dataDir], { cwd: dataDir, env, input: '' });

beforeAll(async () => {
  dataDir = mkdtempSync(path.join(tmpdir(), 'switchboard-cli-generated-'));
  database = path.join(dataDir, 'switchboard.db');
  expect((await run(['accounts', 'create', 'acme'])).code).toBe(0);
  expect((await run(['keys', 'create', '--account', 'acme', '--name', 'web'])).code).toBe(0);
});

afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

/** What operators manage, row by row (timestamps of use included: a refused command must not even touch a key). */
function snapshot(): string {
  const sqlite = new SqliteDatabase(database, { readonly: true });
  try {
    return JSON.stringify(
      ['accounts', 'api_keys', 'users', 'memberships', 'invitations'].map((table) =>
        sqlite.prepare(`select * from ${table} order by 1`).all(),
      ),
    );
  } finally {
    sqlite.close();
  }
}

const commands = [
  ['accounts', 'create'],
  ['accounts', 'list'],
  ['accounts', 'set-models'],
  ['accounts', 'disable'],
  ['accounts', 'enable'],
  ['accounts', 'set-body-logging'],
  ['accounts', 'set-limits'],
  ['keys', 'create'],
  ['keys', 'list'],
  ['keys', 'revoke'],
  ['keys', 'rotate'],
  ['keys', 'set-limits'],
  ['logs'],
  ['users', 'list'],
  ['users', 'invite'],
  ['users', 'set-admin'],
  ['users', 'disable'],
  ['users', 'enable'],
  ['usage', 'rebuild-rollups'],
  ['config', 'check'],
  ['accounts'],
  ['nonsense'],
];

const oddValue = fc.oneof(
  fc.constantFrom(
    '',
    ' ',
    '-1',
    '0',
    '1.5',
    '1e400',
    '99999999999999999999',
    'NaN',
    'Infinity',
    '0x10',
    'none',
    'on',
    'maybe',
    'acme',
    'ghost',
    'key_nope',
    'sk-sb-garbage',
    'a@b.c',
    '99999999d',
    '-5d',
    'a\nb',
    '\u001b[2J',
    'x'.repeat(5000),
    '--',
  ),
  fc.string({ maxLength: 12 }),
);
const option = fc.constantFrom(
  '--rpm',
  '--tpm',
  '--concurrency',
  '--daily-budget',
  '--monthly-budget',
  '--limit',
  '--account',
  '--name',
  '--environment',
  '--models',
  '--expires-in',
  '--grace',
  '--endpoint',
  '--from',
  '--to',
  '--role',
  '--config',
  '--unknown-flag',
);
const argumentVector = fc.tuple(
  fc.constantFrom(...commands),
  fc.array(
    fc.oneof(
      oddValue,
      fc.tuple(option, oddValue).map(([flag, value]) => `${flag}=${value}`),
      option,
    ),
    {
      maxLength: 4,
    },
  ),
);

const runs = Number(process.env.FUZZ_RUNS ?? 40);

describe('switchboard CLI on generated bad command lines', () => {
  it(
    'answers every command line with a message, never a stack trace, and changes nothing when it refuses',
    async () => {
      await fc.assert(
        fc.asyncProperty(argumentVector, async ([command, rest]) => {
          const before = snapshot();
          const result = await run([...command, ...rest]);
          expect(result.stderr).not.toMatch(/^\s+at /m);
          expect([0, 1]).toContain(result.code);
          if (result.code !== 0) {
            expect(result.stderr).toMatch(/^(switchboard|error): /);
            expect(snapshot()).toBe(before);
          }
        }),
        { numRuns: runs },
      );
      // Each run starts a CLI process (~0.5 s, several on a loaded machine): the deadline only catches a stuck one.
    },
    runs * 5_000,
  );
});
