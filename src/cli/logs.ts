import { Command, Option } from 'commander';
import { requireAccount } from '../accounts/service.js';
import { endpointNames } from '../api/v1/pipeline/endpoint-names.js';
import { type LogEntry, toLogEntry } from '../request-log/entry.js';
import { searchRequestLog } from '../request-log/search.js';
import { type CommonOptions, withCommonOptions, withContext } from './context.js';
import { printJson, printTable } from './output.js';

function formatTokens(prompt: number | null, completion: number | null, estimated: boolean): string {
  if (prompt === null && completion === null) return '-';
  return `${prompt ?? 0}/${completion ?? 0}${estimated ? ' (est.)' : ''}`;
}

/** The deployment that answered, with the fallback model and the number of attempts when they say something. */
function servedBy(entry: LogEntry): string {
  if (!entry.deployment) return '-';
  const fallback = entry.servedModel && entry.servedModel !== entry.model ? ` via ${entry.servedModel}` : '';
  const attempts = (entry.attemptCount ?? 0) > 1 ? ` (${entry.attemptCount} attempts)` : '';
  return `${entry.deployment}${fallback}${attempts}`;
}

export function logsCommand(): Command {
  return withCommonOptions(
    new Command('logs')
      .description("show an account's request log, newest first")
      .requiredOption('--account <name>', 'account name')
      // A name the gateway never logs would match nothing, and an empty list would look like no traffic.
      .addOption(new Option('--endpoint <name>', 'only requests to this endpoint').choices(endpointNames))
      .option('--limit <n>', 'how many rows', '50'),
  ).action(async (options: CommonOptions & { account: string; endpoint?: string; limit: string }) => {
    const limit = Number(options.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 10_000)
      throw new Error('--limit is a whole number from 1 to 10000');
    await withContext(options, async ({ database, output }) => {
      const account = await requireAccount(database.db, options.account);
      const search = { accountId: account.id, endpoint: options.endpoint, limit };
      const entries = (await searchRequestLog(database.db, search)).map(toLogEntry);
      if (output.json) return printJson(output, entries);
      printTable(
        output,
        [
          'TIME',
          'REQUEST ID',
          'ENDPOINT',
          'KEY',
          'MODEL',
          'SERVED BY',
          'STATUS',
          'LATENCY',
          'TTFT',
          'TOKENS IN/OUT',
          'COST $',
          'ERROR',
        ],
        entries.map((entry) => [
          entry.time,
          entry.requestId,
          entry.endpoint ?? '-',
          entry.keyName,
          entry.model || '-',
          servedBy(entry),
          `${entry.status}${entry.stream ? ' (stream)' : ''}`,
          `${entry.latencyMs}ms`,
          entry.ttftMs === null ? '-' : `${entry.ttftMs}ms`,
          formatTokens(entry.usage.promptTokens, entry.usage.completionTokens, entry.usage.estimated),
          entry.costUsd === null ? '-' : entry.costUsd.toFixed(6),
          entry.error?.code ?? entry.error?.type ?? '',
        ]),
      );
    });
  });
}
