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

export function buildProgram(json = false): Command {
  const program = new Command('switchboard')
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
  if (json) reportUsageErrorsAsJson(program);
  return program;
}

/** Whether the command line asks for machine-readable output (what follows `--` is not the CLI's). */
export function wantsJson(argv: readonly string[]): boolean {
  const end = argv.indexOf('--');
  return (end === -1 ? argv : argv.slice(0, end)).includes('--json');
}

/** How a failed command's reason is written to stderr: under `--json` as JSON, so a script reads it as it reads output. */
export function failureLine(message: string, json: boolean): string {
  return json ? `${JSON.stringify({ error: { message } })}\n` : `switchboard: ${message}\n`;
}

/** Commander's own refusals (a missing option, an unknown command) as JSON, on every command of the tree. */
function reportUsageErrorsAsJson(command: Command): void {
  command.configureOutput({
    outputError: (text, write) => write(failureLine(text.trim().replace(/^error: /, ''), true)),
  });
  for (const child of command.commands) reportUsageErrorsAsJson(child);
}

export async function runCli(argv: readonly string[]): Promise<void> {
  // Output piped to a reader that stopped (`switchboard logs | head`): done, as `cat` would be, not a stack trace.
  // `serve` replaces this: a server keeps serving when its log reader goes away (serve.ts).
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE' || error.code === 'ERR_STREAM_DESTROYED') process.exit(0);
    process.stderr.write(`switchboard: cannot write the output: ${error.message}\n`);
    process.exit(1);
  });
  await buildProgram(wantsJson(argv)).parseAsync([...argv]);
}
