import type { Command } from 'commander';
import { publishAccessChange } from '../access/change-feed.js';
import { type LoadedConfig, loadConfig } from '../config/loader.js';
import { type DatabaseHandle, openDatabase } from '../db/connect.js';
import { latestAccessChangeId } from '../db/repositories/access-changes.js';
import { loadKeySecret } from '../keys/secret.js';
import { consoleOutput, type Output } from './output.js';

/** Options every command accepts, so each one finds the same configuration and database as `serve`. */
export interface CommonOptions {
  config?: string;
  dataDir?: string;
  json?: boolean;
}

/**
 * An option whose empty value is refused: `--data-dir "$DIR"` with DIR unset would otherwise mean the current
 * directory (a fresh database there), and an empty `--config` the default file or none.
 */
export function nonEmptyOption(flag: string): (value: string) => string {
  return (value) => {
    if (value.trim() === '') throw new Error(`${flag} is empty: give a value, or leave the option out`);
    return value;
  };
}

export function withCommonOptions(command: Command): Command {
  return command
    .option(
      '--config <file>',
      'configuration file (default: $SWITCHBOARD_CONFIG, then ./switchboard.yaml)',
      nonEmptyOption('--config'),
    )
    .option('--data-dir <dir>', 'data directory (overrides server.data_dir)', nonEmptyOption('--data-dir'))
    .option('--json', 'print machine-readable JSON');
}

export interface CliContext {
  loaded: LoadedConfig;
  database: DatabaseHandle;
  output: Output;
  secret(): Buffer;
  close(): Promise<void>;
}

/** Opens configuration and database for one command; run `use` and always close. */
export async function withContext<T>(options: CommonOptions, use: (context: CliContext) => Promise<T>): Promise<T> {
  const loaded = loadConfig({ file: options.config, overrides: { dataDir: options.dataDir } });
  const database = await openDatabase(loaded.config);
  const context: CliContext = {
    loaded,
    database,
    output: consoleOutput(options.json === true),
    secret: () => loadKeySecret(loaded.config.server.dataDir, loaded.config.keys.secret),
    close: () => database.close(),
  };
  const changesBefore = await latestAccessChangeId(database.db);
  try {
    const result = await use(context);
    await announceChanges(loaded, database, changesBefore);
    return result;
  } finally {
    await context.close();
  }
}

/**
 * Servers poll the database for access changes; with Redis configured they are also told at once. A failure to
 * publish is only a warning: the poll still delivers the change within a second.
 */
async function announceChanges(loaded: LoadedConfig, database: DatabaseHandle, changesBefore: number): Promise<void> {
  const url = loaded.config.redis.url;
  if (!url || (await latestAccessChangeId(database.db)) === changesBefore) return;
  const { Redis } = await import('ioredis');
  const redis = new Redis(url, {
    lazyConnect: true,
    connectTimeout: 2000,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  try {
    await redis.connect();
    await publishAccessChange(redis, loaded.config.redis.keyPrefix);
  } catch (error) {
    process.stderr.write(
      `warning: could not notify servers through Redis (${(error as Error).message}); they will see the change within a second\n`,
    );
  } finally {
    redis.disconnect();
  }
}
