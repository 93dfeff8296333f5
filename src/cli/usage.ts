import { Command } from 'commander';
import { rebuildRollupsFromLog } from '../usage/rebuild-rollups.js';
import { type CommonOptions, withCommonOptions, withContext } from './context.js';
import { printJson } from './output.js';

function parseTime(text: string | undefined, option: string): number | undefined {
  if (text === undefined) return undefined;
  const time = /^\d+$/.test(text) ? Number(text) : Date.parse(text);
  if (!Number.isFinite(time))
    throw new Error(`${option} is an ISO 8601 time (2026-01-31T00:00Z) or epoch milliseconds`);
  return time;
}

export function usageCommand(): Command {
  const rebuild = withCommonOptions(
    new Command('rebuild-rollups')
      .description(
        'recompute the hourly and daily usage rollups from the request log (by default every hour the log still holds)',
      )
      .option('--from <time>', 'first hour to rebuild (ISO 8601 or epoch ms; widened to a whole hour)')
      .option('--to <time>', 'end of the range, exclusive (default: now)'),
  ).action(async (options: CommonOptions & { from?: string; to?: string }) => {
    const from = parseTime(options.from, '--from');
    const to = parseTime(options.to, '--to');
    await withContext(options, async ({ database, loaded, output }) => {
      const started = performance.now();
      const result = await rebuildRollupsFromLog(database, {
        from,
        to,
        retentionMs: loaded.config.requestLog.retentionMs,
        retentionIntervalMs: loaded.config.requestLog.retentionIntervalMs,
      });
      const seconds = (performance.now() - started) / 1000;
      if (output.json) return printJson(output, result ? { ...result, seconds } : { hourlyRows: 0, dailyRows: 0 });
      if (!result) return output.write('The request log is empty: nothing to roll up.');
      output.write(
        `Rebuilt usage rollups from ${new Date(result.from).toISOString()} to ${new Date(result.to).toISOString()}: ` +
          `${result.hourlyRows} hourly and ${result.dailyRows} daily rows in ${seconds.toFixed(1)} s.`,
      );
    });
  });
  return new Command('usage').description('usage rollups').addCommand(rebuild);
}
