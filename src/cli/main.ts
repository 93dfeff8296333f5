import { Command } from 'commander';
import { packageVersion } from '../package-files.js';
import { accountsCommand } from './accounts.js';
import { configCommand } from './config.js';
import { keysCommand } from './keys.js';
import { logsCommand } from './logs.js';
import { modelsCommand } from './models.js';
import { serveCommand } from './serve.js';
import { usageCommand } from './usage.js';
import { usersCommand } from './users.js';

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
    .addCommand(modelsCommand())
    .addCommand(usageCommand());
}

export async function runCli(argv: readonly string[]): Promise<void> {
  // Output piped to a reader that stopped (`switchboard logs | head`): done, as `cat` would be, not a stack trace.
  // `serve` replaces this: a server keeps serving when its log reader goes away (serve.ts).
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE' || error.code === 'ERR_STREAM_DESTROYED') process.exit(0);
    process.stderr.write(`switchboard: cannot write the output: ${error.message}\n`);
    process.exit(1);
  });
  await buildProgram().parseAsync([...argv]);
}
