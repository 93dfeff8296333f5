import { chmodSync, existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Kysely } from 'kysely';
import { createAccount, listAllAccounts } from '../accounts/service.js';
import { ensureDirectory, reasonOf } from '../config/data-directory.js';
import type { Database } from '../db/schema.js';
import { ApiError } from '../errors/api-error.js';
import { createKey } from '../keys/service.js';

/**
 * The first start of a fresh installation: with no account in the database yet, `serve` creates the account
 * "default" and its first API key, and prints the key once together with commands that work exactly as printed.
 * From then on nothing is created: every later account and key is the operator's decision.
 */

export const firstAccountName = 'default';
export const firstKeyName = 'first-key';

export interface FirstRun {
  account: string;
  key: string;
  keyId: string;
}

/**
 * Creates the first account and key when the database has no account at all; otherwise does nothing. Both are created
 * in one transaction, and `keep` (writing the key to its file) runs before it commits: a start stopped half-way, or a
 * key file that cannot be written, leaves no account without its first key, and the next start tries again.
 */
export async function bootstrapFirstRun(
  db: Kysely<Database>,
  secret: Buffer,
  keep: (firstRun: FirstRun) => void = () => {},
): Promise<FirstRun | undefined> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await createFirst(db, secret, keep);
    } catch (error) {
      // SQLite refuses at once (no waiting) a transaction that read before another process wrote: try again, and
      // the next attempt sees that process's account.
      const code = (error as { code?: unknown }).code;
      if (typeof code === 'string' && code.startsWith('SQLITE_BUSY') && attempt < 50) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        continue;
      }
      throw error;
    }
  }
}

async function createFirst(
  db: Kysely<Database>,
  secret: Buffer,
  keep: (firstRun: FirstRun) => void,
): Promise<FirstRun | undefined> {
  if ((await listAllAccounts(db)).length > 0) return undefined;
  try {
    return await db.transaction().execute(async (transaction) => {
      if ((await listAllAccounts(transaction)).length > 0) return undefined;
      await createAccount(transaction, { name: firstAccountName });
      const created = await createKey(transaction, secret, { account: firstAccountName, name: firstKeyName });
      const firstRun = { account: firstAccountName, key: created.key, keyId: created.info.id };
      keep(firstRun);
      return firstRun;
    });
  } catch (error) {
    // Another process (a second server, the CLI) created an account in the meantime: theirs to announce.
    if ((error instanceof ApiError && error.status === 409) || (await listAllAccounts(db)).length > 0) {
      return undefined;
    }
    throw error;
  }
}

/** The file the first key is written to when it cannot be printed to a terminal. */
export const firstKeyFileName = 'first-api-key';

/** Writes the key to a file only this user can read (0600, also when the file existed); returns its absolute path. */
export function writeFirstKeyFile(dataDir: string, key: string): string {
  ensureDirectory(dataDir, 'the data directory');
  const file = path.resolve(dataDir, firstKeyFileName);
  try {
    // Made unreadable before the key goes in: a file left from an earlier installation may have another mode.
    if (existsSync(file)) chmodSync(file, 0o600);
    writeFileSync(file, `${key}\n`, { mode: 0o600 });
    chmodSync(file, 0o600);
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code === 'EISDIR' ? 'it is a directory' : reasonOf(error, dataDir);
    throw new Error(
      `cannot write the first API key to ${file}: ${reason}; nothing was created, start again once fixed`,
    );
  }
  return file;
}

/** The address a client on this machine should use: a wildcard listen address is not one to connect to. */
export function clientBaseUrl(listeningUrl: string): string {
  const url = new URL(listeningUrl);
  if (url.hostname === '0.0.0.0') url.hostname = '127.0.0.1';
  if (url.hostname === '[::]') url.hostname = 'localhost';
  return `${url.origin}/v1`;
}

export interface BannerInput {
  baseUrl: string;
  key: string;
  account: string;
  /** The model the examples call; undefined when no model is configured yet. */
  model: string | undefined;
}

/** Marks the start and end of each runnable example, so a test can run them exactly as a person would copy them. */
export const exampleMarkers = {
  curl: '--- curl ---',
  python: '--- Python (pip install openai) ---',
  javascript: '--- JavaScript (npm install openai; save as hello.mjs, run with node hello.mjs) ---',
  end: '---',
} as const;

export function firstRunBanner(input: BannerInput): string {
  const model = input.model ?? 'YOUR-MODEL';
  const body = JSON.stringify({ model, messages: [{ role: 'user', content: 'Say hello in one short sentence.' }] });
  const lines = [
    '',
    '========================================================================================================',
    `First run: created the account "${input.account}" and its first API key. It is shown only this once:`,
    '',
    `    ${input.key}`,
    '',
    `Base URL: ${input.baseUrl}`,
    input.model
      ? `Model:    ${input.model}`
      : 'No model is configured yet: add providers and models to switchboard.yaml (see switchboard.example.yaml).',
    '',
    exampleMarkers.curl,
    `curl ${input.baseUrl}/chat/completions \\`,
    `  -H "Authorization: Bearer ${input.key}" \\`,
    '  -H "Content-Type: application/json" \\',
    `  -d '${body}'`,
    exampleMarkers.end,
    '',
    exampleMarkers.python,
    'from openai import OpenAI',
    '',
    `client = OpenAI(base_url="${input.baseUrl}", api_key="${input.key}")`,
    'completion = client.chat.completions.create(',
    `    model="${model}",`,
    '    messages=[{"role": "user", "content": "Say hello in one short sentence."}],',
    ')',
    'print(completion.choices[0].message.content)',
    exampleMarkers.end,
    '',
    exampleMarkers.javascript,
    "import OpenAI from 'openai';",
    '',
    `const client = new OpenAI({ baseURL: '${input.baseUrl}', apiKey: '${input.key}' });`,
    'const completion = await client.chat.completions.create({',
    `  model: '${model}',`,
    "  messages: [{ role: 'user', content: 'Say hello in one short sentence.' }],",
    '});',
    'console.log(completion.choices[0].message.content);',
    exampleMarkers.end,
    '',
    'More keys and accounts: npx switchboard keys create --account default --name my-app (see README.md).',
    '========================================================================================================',
    '',
  ];
  return lines.join('\n');
}
