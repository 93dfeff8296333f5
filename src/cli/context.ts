import type { Command } from 'commander';
import { type LoadedConfig, loadConfig } from '../config/loader.js';
import { type DatabaseHandle, openDatabase } from '../db/connect.js';
import { loadKeySecret } from '../keys/secret.js';
import { consoleOutput, type Output } from './output.js';

/** Options every command accepts, so each one finds the same configuration and database as `serve`. */
export interface CommonOptions {
  config?: string;
  dataDir?: string;
  json?: boolean;
}

export function withCommonOptions(command: Command): Command {
  return command
    .option('--config <file>', 'configuration file (default: $SWITCHBOARD_CONFIG, then ./switchboard.yaml)')
    .option('--data-dir <dir>', 'data directory (overrides server.data_dir)')
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
  try {
    return await use(context);
  } finally {
    await context.close();
  }
}
