import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import { accountsCommand } from './accounts.js';
import { configCommand } from './config.js';
import { keysCommand } from './keys.js';
import { logsCommand } from './logs.js';
import { modelsCommand } from './models.js';
import { serveCommand } from './serve.js';
import { usersCommand } from './users.js';

function packageVersion(): string {
  try {
    const text = readFileSync(new URL('../../package.json', import.meta.url), 'utf8');
    return (JSON.parse(text) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

export function buildProgram(): Command {
  return new Command('switchboard')
    .description('Switchboard: a self-hostable, multi-tenant OpenAI-compatible gateway')
    .version(packageVersion())
    .showHelpAfterError()
    .addCommand(serveCommand())
    .addCommand(accountsCommand())
    .addCommand(keysCommand())
    .addCommand(logsCommand())
    .addCommand(usersCommand())
    .addCommand(configCommand())
    .addCommand(modelsCommand());
}

export async function runCli(argv: readonly string[]): Promise<void> {
  await buildProgram().parseAsync([...argv]);
}
