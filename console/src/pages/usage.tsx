import { queryString } from '../api.js';
import { type ChartSeries, meaningColors, TimeChart } from '../components/chart.js';
import { ErrorMessage, Link, Loading, PageHeader } from '../components/common.js';
import { useApp } from '../context.js';
import { formatCompact, formatCost, formatInteger, formatMs } from '../format.js';
import { navigate } from '../router.js';
import type { UsageTotals, UsageView } from '../types.js';
import { useAsync } from '../use-async.js';

/** Usage over time from the request log: the same rows the log page lists, so the numbers agree with it. */

const spans: Record<string, { label: string; ms: number; bucket: 'hour' | 'day' }> = {
  '24h': { label: 'Last 24 hours, hourly', ms: 86_400_000, bucket: 'hour' },
  '7d': { label: 'Last 7 days, hourly', ms: 7 * 86_400_000, bucket: 'hour' },
  '30d': { label: 'Last 30 days, daily', ms: 30 * 86_400_000, bucket: 'day' },
  '90d': { label: 'Last 90 days, daily', ms: 90 * 86_400_000, bucket: 'day' },
};

const groupings = { none: 'Whole account', key: 'Per key', model: 'Per model' } as const;
type Grouping = keyof typeof groupings;

function Tile(props: { label: string; value: string; detail?: string }) {
  return (
    <div class="tile">
      <p class="tile-label">{props.label}</p>
      <p class="tile-value">{props.value}</p>
      {props.detail && <p class="tile-detail">{props.detail}</p>}
    </div>
  );
}

const errorRate = (totals: UsageTotals) =>
  totals.requests === 0 ? '0%' : `${((100 * totals.errors) / totals.requests).toFixed(totals.errors === 0 ? 0 : 1)}%`;

export function UsagePage(props: { accountId: string; query: URLSearchParams }) {
  const { api } = useApp();
  const spanName = spans[props.query.get('span') ?? ''] ? (props.query.get('span') as string) : '24h';
  const span = spans[spanName] ?? { label: '', ms: 86_400_000, bucket: 'hour' as const };
  const groupBy: Grouping =
    (['none', 'key', 'model'] as const).find((value) => value === props.query.get('groupBy')) ?? 'none';
  const setView = (changes: { span?: string; groupBy?: Grouping }) =>
    navigate(
      `/accounts/${props.accountId}/usage${queryString({ span: changes.span ?? spanName, groupBy: changes.groupBy ?? groupBy })}`,
      { replace: true },
    );

  const usage = useAsync(() => {
    const to = Date.now();
    return api.get<UsageView>(
      `/accounts/${props.accountId}/usage${queryString({
        from: new Date(to - span.ms).toISOString(),
        to: new Date(to).toISOString(),
        bucket: span.bucket,
        groupBy,
        tzOffsetMinutes: -new Date().getTimezoneOffset(),
      })}`,
    );
  }, [props.accountId, spanName, groupBy]);

  const data = usage.data;
  const starts = data?.series[0]?.points.map((point) => point.start) ?? [];
  const grouped = groupBy !== 'none';
  const bySeries = (pick: (point: UsageView['series'][number]['points'][number]) => number | null): ChartSeries[] =>
    (data?.series ?? []).map((series) => ({ name: series.name ?? 'All', values: series.points.map(pick) }));
  const single = data?.series[0];
  const logLink = (extra: Record<string, string>) =>
    data
      ? `/accounts/${props.accountId}/logs${queryString({ range: 'custom', from: data.from, to: data.to, ...extra })}`
      : `/accounts/${props.accountId}/logs`;

  return (
    <>
      <PageHeader title="Usage" description="Requests, tokens, errors and latency, from this account's request log.">
        <button type="button" class="button" onClick={usage.reload}>
          Refresh
        </button>
      </PageHeader>
      <form class="filters" aria-label="Usage view" onSubmit={(event) => event.preventDefault()}>
        <label class="field">
          <span>Period</span>
          <select value={spanName} onChange={(event) => setView({ span: event.currentTarget.value })}>
            {Object.entries(spans).map(([value, choice]) => (
              <option key={value} value={value}>
                {choice.label}
              </option>
            ))}
          </select>
        </label>
        <label class="field">
          <span>Break down</span>
          <select value={groupBy} onChange={(event) => setView({ groupBy: event.currentTarget.value as Grouping })}>
            {Object.entries(groupings).map(([value, label]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </select>
        </label>
      </form>
      <ErrorMessage error={usage.error} />
      {!data ? (
        !usage.error && <Loading />
      ) : (
        <>
          <section class="tiles" aria-label="Totals">
            <Tile label="Requests" value={formatInteger(data.totals.requests)} />
            <Tile
              label="Errors"
              value={formatInteger(data.totals.errors)}
              detail={`${errorRate(data.totals)} of requests`}
            />
            <Tile
              label="Tokens"
              value={formatCompact(data.totals.totalTokens)}
              detail={`${formatCompact(data.totals.promptTokens)} in, ${formatCompact(data.totals.completionTokens)} out`}
            />
            <Tile label="Cost" value={formatCost(data.totals.costUsd)} />
            <Tile label="Latency p50" value={formatMs(data.totals.latencyP50Ms)} detail="successful requests" />
            <Tile label="Latency p95" value={formatMs(data.totals.latencyP95Ms)} detail="successful requests" />
          </section>
          <div class="charts">
            <TimeChart
              title="Requests"
              kind="bar"
              bucket={data.bucket}
              starts={starts}
              format={formatCompact}
              series={
                grouped || !single
                  ? bySeries((point) => point.requests)
                  : [
                      {
                        name: 'Successful',
                        color: meaningColors.success,
                        values: single.points.map((point) => point.requests - point.errors - point.cancelled),
                      },
                      {
                        name: 'Errors',
                        color: meaningColors.error,
                        values: single.points.map((point) => point.errors),
                      },
                      {
                        name: 'Cancelled',
                        color: meaningColors.cancelled,
                        values: single.points.map((point) => point.cancelled),
                      },
                    ]
              }
            />
            <TimeChart
              title="Tokens"
              kind="bar"
              bucket={data.bucket}
              starts={starts}
              format={formatCompact}
              series={
                grouped || !single
                  ? bySeries((point) => point.totalTokens)
                  : [
                      { name: 'Prompt', values: single.points.map((point) => point.promptTokens) },
                      { name: 'Completion', values: single.points.map((point) => point.completionTokens) },
                    ]
              }
            />
            <TimeChart
              title="Errors"
              kind="bar"
              bucket={data.bucket}
              starts={starts}
              format={formatCompact}
              series={
                grouped
                  ? bySeries((point) => point.errors)
                  : bySeries((point) => point.errors).map((series) => ({
                      ...series,
                      name: 'Errors',
                      color: meaningColors.error,
                    }))
              }
            />
            <TimeChart
              title={grouped ? 'Latency p95 (successful requests)' : 'Latency p50 and p95 (successful requests)'}
              kind="line"
              bucket={data.bucket}
              starts={starts}
              format={(value) => formatMs(value)}
              series={
                grouped || !single
                  ? bySeries((point) => point.latencyP95Ms)
                  : [
                      { name: 'p50', values: single.points.map((point) => point.latencyP50Ms) },
                      { name: 'p95', values: single.points.map((point) => point.latencyP95Ms) },
                    ]
              }
            />
          </div>
          <section class="card">
            <h2>{grouped ? `Totals ${groupBy === 'key' ? 'per key' : 'per model'}` : 'Totals'}</h2>
            <div class="table-wrap">
              <table class="data-table">
                <thead>
                  <tr>
                    <th scope="col">{groupBy === 'key' ? 'Key' : groupBy === 'model' ? 'Model' : 'Account'}</th>
                    <th scope="col" class="number">
                      Requests
                    </th>
                    <th scope="col" class="number">
                      Errors
                    </th>
                    <th scope="col" class="number">
                      Tokens
                    </th>
                    <th scope="col" class="number">
                      Cost
                    </th>
                    <th scope="col" class="number">
                      p50
                    </th>
                    <th scope="col" class="number">
                      p95
                    </th>
                    <th scope="col">
                      <span class="visually-hidden">Log</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {data.series.map((series) => (
                    <tr key={series.id ?? 'all'}>
                      <th scope="row">{series.name ?? 'All keys and models'}</th>
                      <td class="number">{formatInteger(series.totals.requests)}</td>
                      <td class="number">{formatInteger(series.totals.errors)}</td>
                      <td class="number">{formatInteger(series.totals.totalTokens)}</td>
                      <td class="number">{formatCost(series.totals.costUsd)}</td>
                      <td class="number">{formatMs(series.totals.latencyP50Ms)}</td>
                      <td class="number">{formatMs(series.totals.latencyP95Ms)}</td>
                      <td>
                        <Link
                          class="button small ghost"
                          href={logLink(
                            groupBy === 'key' && series.id
                              ? { key: series.id }
                              : groupBy === 'model' && series.id
                                ? { model: series.id }
                                : {},
                          )}
                        >
                          Log
                        </Link>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
            <p class="muted small">
              Latency percentiles are exact (nearest rank) over successful requests. Counts match the request log for
              the same period ({data.bucket === 'day' ? 'whole days' : 'whole hours'}, your time zone).
            </p>
          </section>
        </>
      )}
    </>
  );
}
