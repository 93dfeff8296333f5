import { queryString } from '../api.js';
import { type ChartSeries, meaningColors, TimeChart } from '../components/chart.js';
import { ErrorMessage, Link, Loading, PageHeader } from '../components/common.js';
import { DataTable } from '../components/data-table.js';
import { SelectField } from '../components/fields.js';
import { useApp } from '../context.js';
import { formatCompact, formatCost, formatCostAxis, formatEndpoint, formatInteger, formatMs } from '../format.js';
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

const groupings = {
  none: 'Whole account',
  account: 'Per account',
  key: 'Per key',
  model: 'Per model',
  endpoint: 'Per endpoint',
  provider: 'Per provider',
} as const;
type Grouping = keyof typeof groupings;
const costGroupings = { account: 'By account', model: 'By model', key: 'By key' } as const;
type CostGrouping = keyof typeof costGroupings;
const columnHeadings: Record<Grouping, string> = {
  none: 'Account',
  account: 'Account',
  key: 'Key',
  model: 'Model',
  endpoint: 'Endpoint',
  provider: 'Provider',
};

/** The totals table's number columns: heading, the cell's label where rows stack on a narrow screen, and the value. */
const totalColumns: { heading: string; label: string; value: (totals: UsageTotals) => string }[] = [
  { heading: 'Requests', label: 'Requests', value: (totals) => formatInteger(totals.requests) },
  { heading: 'Errors', label: 'Errors', value: (totals) => formatInteger(totals.errors) },
  { heading: 'Tokens', label: 'Tokens', value: (totals) => formatInteger(totals.totalTokens) },
  { heading: 'Cost', label: 'Cost', value: (totals) => formatCost(totals.costUsd) },
  { heading: 'p50', label: 'Latency p50', value: (totals) => formatMs(totals.latencyP50Ms) },
  { heading: 'p95', label: 'Latency p95', value: (totals) => formatMs(totals.latencyP95Ms) },
];

/** Requests that named no model: refused before one was read (401, unparsable body) or not for a model (/v1/models). */
export const noModelLabel = 'No model (refused, or /v1/models)';

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

/**
 * One account's usage, or (without an account: the operator's overview) every account's, with a breakdown per account
 * and the cost chart stacked by account.
 */
export function UsagePage(props: { accountId?: string; query: URLSearchParams }) {
  const { api } = useApp();
  const overview = props.accountId === undefined;
  const available = (Object.keys(groupings) as Grouping[]).filter((value) => overview || value !== 'account');
  const costChoices = (Object.keys(costGroupings) as CostGrouping[]).filter((value) => overview || value !== 'account');
  const defaultCostBy: CostGrouping = overview ? 'account' : 'model';
  const spanName = spans[props.query.get('span') ?? ''] ? (props.query.get('span') as string) : '24h';
  const span = spans[spanName] ?? { label: '', ms: 86_400_000, bucket: 'hour' as const };
  const groupBy: Grouping = available.find((value) => value === props.query.get('groupBy')) ?? 'none';
  const costBy: CostGrouping = costChoices.find((value) => value === props.query.get('costBy')) ?? defaultCostBy;
  const pagePath = overview ? '/admin/usage' : `/accounts/${props.accountId}/usage`;
  const apiPath = overview ? '/usage' : `/accounts/${props.accountId}/usage`;
  const logsPath = overview ? '/admin/logs' : `/accounts/${props.accountId}/logs`;
  const setView = (changes: { span?: string; groupBy?: Grouping; costBy?: CostGrouping }) => {
    const nextCostBy = changes.costBy ?? costBy;
    navigate(
      `${pagePath}${queryString({
        span: changes.span ?? spanName,
        groupBy: changes.groupBy ?? groupBy,
        costBy: nextCostBy === defaultCostBy ? undefined : nextCostBy,
      })}`,
      { replace: true },
    );
  };

  // The export is the report on screen (its period, buckets and breakdown) as a table: one row per series and bucket.
  const exportHref = (report: UsageView, format: 'csv' | 'jsonl') =>
    `/api${apiPath}/export${queryString({
      from: report.from,
      to: report.to,
      bucket: report.bucket,
      groupBy,
      tzOffsetMinutes: -new Date().getTimezoneOffset(),
      format,
    })}`;
  const load = (grouping: Grouping, to: number) =>
    api.get<UsageView>(
      `${apiPath}${queryString({
        from: new Date(to - span.ms).toISOString(),
        to: new Date(to).toISOString(),
        bucket: span.bucket,
        groupBy: grouping,
        tzOffsetMinutes: -new Date().getTimezoneOffset(),
      })}`,
    );
  // The cost chart is stacked by key or by model whatever the page's breakdown: a second report when they differ.
  const usage = useAsync(async () => {
    const to = Date.now();
    const [main, cost] = await Promise.all([load(groupBy, to), costBy === groupBy ? undefined : load(costBy, to)]);
    return { main, cost: cost ?? main };
  }, [apiPath, spanName, groupBy, costBy]);

  const data = usage.data?.main;
  const costData = usage.data?.cost;
  // The server's labels are unique (a key's display form is added where two keys share a name).
  const seriesName = (series: UsageView['series'][number], grouping: Grouping) =>
    grouping === 'none'
      ? overview
        ? 'All accounts'
        : 'All keys and models'
      : grouping === 'model' && series.id === ''
        ? noModelLabel
        : grouping === 'endpoint' && series.id
          ? formatEndpoint(series.id)
          : series.label;
  const starts = data?.series[0]?.points.map((point) => point.start) ?? [];
  const grouped = groupBy !== 'none';
  const bySeries = (pick: (point: UsageView['series'][number]['points'][number]) => number | null): ChartSeries[] =>
    (data?.series ?? []).map((series) => ({ name: seriesName(series, groupBy), values: series.points.map(pick) }));
  const single = data?.series[0];
  const logLink = (extra: Record<string, string>) =>
    data ? `${logsPath}${queryString({ range: 'custom', from: data.from, to: data.to, ...extra })}` : logsPath;

  return (
    <>
      <PageHeader
        title={overview ? 'Usage, all accounts' : 'Usage'}
        description={
          overview
            ? 'Requests, tokens, spend, errors and latency across every account.'
            : "Requests, tokens, spend, errors and latency, from this account's request log."
        }
      >
        <button type="button" class="button" onClick={usage.reload}>
          Refresh
        </button>
        {data &&
          (['csv', 'jsonl'] as const).map((format) => (
            <a key={format} class="button" href={exportHref(data, format)} download>
              {format === 'csv' ? 'Export CSV' : 'Export JSON Lines'}
            </a>
          ))}
      </PageHeader>
      <form class="filters" aria-label="Usage view" onSubmit={(event) => event.preventDefault()}>
        <SelectField label="Period" value={spanName} onValue={(value) => setView({ span: value })}>
          {Object.entries(spans).map(([value, choice]) => (
            <option key={value} value={value}>
              {choice.label}
            </option>
          ))}
        </SelectField>
        <SelectField label="Break down" value={groupBy} onValue={(value) => setView({ groupBy: value as Grouping })}>
          {available.map((value) => (
            <option key={value} value={value}>
              {value === 'none' && overview ? 'All accounts together' : groupings[value]}
            </option>
          ))}
        </SelectField>
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
            <Tile label="Latency p50" value={formatMs(data.totals.latencyP50Ms)} detail="successful model calls" />
            <Tile label="Latency p95" value={formatMs(data.totals.latencyP95Ms)} detail="successful model calls" />
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
              title={`Cost ${costGroupings[costBy].toLowerCase()}`}
              kind="bar"
              fractional
              bucket={data.bucket}
              starts={starts}
              format={formatCost}
              formatAxis={formatCostAxis}
              series={(costData?.series ?? []).map((series) => ({
                name: seriesName(series, costBy),
                values: series.points.map((point) => point.costUsd),
              }))}
              controls={
                <label class="chart-control">
                  <span>Stack</span>
                  <select
                    value={costBy}
                    onChange={(event) => setView({ costBy: event.currentTarget.value as CostGrouping })}
                  >
                    {costChoices.map((value) => (
                      <option key={value} value={value}>
                        {costGroupings[value]}
                      </option>
                    ))}
                  </select>
                </label>
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
              title={grouped ? 'Latency p95 (successful model calls)' : 'Latency p50 and p95 (successful model calls)'}
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
            <h2>{grouped ? `Totals ${groupings[groupBy].toLowerCase()}` : 'Totals'}</h2>
            <DataTable label={grouped ? `Totals ${groupings[groupBy].toLowerCase()}` : 'Totals'}>
              <thead>
                <tr>
                  <th scope="col">{columnHeadings[groupBy]}</th>
                  {totalColumns.map((column) => (
                    <th scope="col" class="number" key={column.label}>
                      {column.heading}
                    </th>
                  ))}
                  <th scope="col">
                    <span class="visually-hidden">Log</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {data.series.map((series) => {
                  const filter: Record<string, string> | undefined =
                    groupBy === 'none' ? {} : series.id ? { [groupBy]: series.id } : undefined;
                  return (
                    <tr key={series.id ?? 'all'}>
                      <th scope="row" class="wrap-anywhere">
                        {seriesName(series, groupBy)}
                      </th>
                      {totalColumns.map((column) => (
                        <td class="number" data-label={column.label} key={column.label}>
                          {column.value(series.totals)}
                        </td>
                      ))}
                      <td class="actions">
                        {filter && (
                          <Link class="button small ghost" href={logLink(filter)}>
                            Log
                          </Link>
                        )}
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </DataTable>
            <p class="muted small">
              Latency percentiles cover successful model calls only (model lists and other requests that call no model
              are left out), to within a histogram bucket. Counts, tokens and cost match the request log for the same
              period ({data.bucket === 'day' ? 'whole days' : 'whole hours'}, your time zone).
            </p>
          </section>
        </>
      )}
    </>
  );
}
