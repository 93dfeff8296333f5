import { useEffect, useRef, useState } from 'preact/hooks';
import { queryString } from '../api.js';
import { Badge, Breakable, ErrorMessage, Link, Loading, PageHeader } from '../components/common.js';
import { DataTable } from '../components/data-table.js';
import { SelectField } from '../components/fields.js';
import { useApp } from '../context.js';
import {
  endpointPaths,
  formatCompactTime,
  formatCost,
  formatEndpoint,
  formatInteger,
  formatMs,
  formatTime,
  unknownCostReason,
} from '../format.js';
import { keyLabeller } from '../key-labels.js';
import { navigate } from '../router.js';
import type { ApiKeyView, LogEntryView, LogPage, ModelView } from '../types.js';
import { useAsync } from '../use-async.js';

/**
 * The request log, newest first. Filters live in the address (so a filtered view can be bookmarked or shared);
 * "Load older" follows the API's keyset cursor, so page 500 is as fast as page 1.
 */

const ranges: Record<string, { label: string; ms?: number }> = {
  '1h': { label: 'Last hour', ms: 3_600_000 },
  '24h': { label: 'Last 24 hours', ms: 86_400_000 },
  '7d': { label: 'Last 7 days', ms: 7 * 86_400_000 },
  '30d': { label: 'Last 30 days', ms: 30 * 86_400_000 },
  all: { label: 'All time' },
  custom: { label: 'Between…' },
};

const statusChoices = [
  { value: '', label: 'Any status' },
  { value: 'success', label: 'Success' },
  { value: 'error', label: 'Any error' },
  { value: 'client_error', label: 'Client errors (4xx)' },
  { value: 'server_error', label: 'Server errors (5xx)' },
  { value: 'cancelled', label: 'Cancelled by client' },
];

const pageSize = 50;

/** datetime-local input value (local time, minutes) <-> ISO. */
const toLocalInput = (iso: string) => {
  const date = new Date(iso);
  return new Date(date.getTime() - date.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
};
const fromLocalInput = (value: string) => (value ? new Date(value).toISOString() : '');

export function statusBadge(
  entry: Pick<LogEntryView, 'status' | 'outcome' | 'error'>,
  options: { withCode: boolean } = { withCode: true },
) {
  const tone =
    entry.outcome === 'success'
      ? 'good'
      : entry.outcome === 'cancelled'
        ? 'neutral'
        : entry.status >= 500
          ? 'bad'
          : 'warn';
  return (
    <Badge tone={tone}>
      {entry.status}
      {entry.error?.code && options.withCode
        ? ` ${entry.error.code}`
        : entry.outcome === 'cancelled'
          ? ' cancelled'
          : ''}
    </Badge>
  );
}

export function LogsPage(props: { accountId?: string; query: URLSearchParams }) {
  const { api, accounts } = useApp();
  const admin = props.accountId === undefined;
  const filters = {
    account: admin ? (props.query.get('account') ?? '') : '',
    key: props.query.get('key') ?? '',
    model: props.query.get('model') ?? '',
    endpoint: props.query.get('endpoint') ?? '',
    provider: props.query.get('provider') ?? '',
    environment: props.query.get('environment') ?? '',
    minLatencyMs: props.query.get('minLatencyMs') ?? '',
    requestId: props.query.get('requestId') ?? '',
    status: props.query.get('status') ?? '',
    range: props.query.get('range') ?? '24h',
    from: props.query.get('from') ?? '',
    to: props.query.get('to') ?? '',
  };
  const scopeAccount = props.accountId ?? (filters.account || undefined);
  const basePath = admin ? '/admin/logs' : `/accounts/${props.accountId}/logs`;
  const setFilter = (changes: Partial<typeof filters>) => {
    const next = { ...filters, ...changes };
    if (next.range === '24h') next.range = '';
    navigate(`${basePath}${queryString(next)}`, { replace: true });
  };

  const keys = useAsync(
    () => (scopeAccount ? api.get<ApiKeyView[]>(`/accounts/${scopeAccount}/keys`) : Promise.resolve([])),
    [scopeAccount],
  );
  const models = useAsync(
    () =>
      scopeAccount
        ? api.get<ModelView[]>(`/accounts/${scopeAccount}/models`)
        : admin
          ? api.get<ModelView[]>('/models')
          : Promise.resolve([]),
    [scopeAccount],
  );

  // A request id names one request whenever it was made: the time range does not apply to it.
  const byRequestId = filters.requestId !== '';
  const filterQuery = () => {
    const range = ranges[filters.range];
    const now = Date.now();
    return {
      account: admin ? filters.account : undefined,
      key: filters.key,
      model: filters.model,
      endpoint: filters.endpoint,
      provider: filters.provider,
      environment: filters.environment,
      minLatencyMs: filters.minLatencyMs,
      requestId: filters.requestId,
      status: filters.status,
      from: byRequestId
        ? undefined
        : filters.range === 'custom'
          ? filters.from
          : range?.ms
            ? new Date(now - range.ms).toISOString()
            : undefined,
      to: !byRequestId && filters.range === 'custom' ? filters.to : undefined,
    };
  };
  const apiQuery = () => ({ ...filterQuery(), limit: pageSize });
  const exportHref = (format: 'csv' | 'jsonl') =>
    `/api${admin ? '/logs' : `/accounts/${props.accountId}/logs`}/export${queryString({ ...filterQuery(), format })}`;
  const providers = [...new Set((models.data ?? []).map((model) => model.provider))].sort();
  const environments = [
    ...new Set((keys.data ?? []).map((key) => key.environment).filter((value): value is string => Boolean(value))),
  ].sort();
  const listPath = admin ? '/logs' : `/accounts/${props.accountId}/logs`;
  const filterKey = JSON.stringify(filters);
  // "Load older" must continue the query the first page ran (a relative range's start is fixed at that moment).
  const lastQuery = useRef<ReturnType<typeof apiQuery> | undefined>(undefined);
  const first = useAsync(() => {
    lastQuery.current = apiQuery();
    return api.get<LogPage>(`${listPath}${queryString(lastQuery.current)}`);
  }, [listPath, filterKey]);
  const [older, setOlder] = useState<{ rows: LogEntryView[]; keys: ApiKeyView[]; cursor: string | null }>({
    rows: [],
    keys: [],
    cursor: null,
  });
  const [loadingOlder, setLoadingOlder] = useState(false);
  const [olderError, setOlderError] = useState<unknown>();
  useEffect(() => {
    setOlder({ rows: [], keys: [], cursor: first.data?.nextCursor ?? null });
  }, [first.data]);

  const rows = [...(first.data?.data ?? []), ...older.rows];
  const accountName = (id: string) => accounts.find((account) => account.id === id)?.name ?? id;
  // Each page brings the keys of its rows and their namesakes: enough to tell apart keys that share a name.
  const keyLabel = keyLabeller([...(first.data?.keys ?? []), ...older.keys]);
  const detailPath = (entry: LogEntryView) =>
    admin ? `/admin/logs/${entry.requestId}` : `/accounts/${props.accountId}/logs/${entry.requestId}`;

  return (
    <>
      <PageHeader
        title={admin ? 'Request log, all accounts' : 'Request log'}
        description="Every request to /v1, newest first. Select a row's time for the full record."
      >
        <button type="button" class="button" onClick={first.reload}>
          Refresh
        </button>
        {(['csv', 'jsonl'] as const).map((format) => (
          <a
            key={format}
            class="button"
            href={exportHref(format)}
            download
            // A relative range ("last 24 hours") ends now: the link is brought up to date when it is followed.
            onClick={(event) => {
              event.currentTarget.href = exportHref(format);
            }}
          >
            {format === 'csv' ? 'Export CSV' : 'Export JSON Lines'}
          </a>
        ))}
      </PageHeader>
      <form
        class="find-request"
        aria-label="Find a request"
        onSubmit={(event) => {
          event.preventDefault();
          const value = new FormData(event.currentTarget).get('requestId');
          setFilter({ requestId: typeof value === 'string' ? value.trim() : '' });
        }}
      >
        <label class="field">
          <span>Find a request by its id (x-request-id)</span>
          <div class="secret-row">
            <input
              name="requestId"
              key={filters.requestId}
              defaultValue={filters.requestId}
              placeholder="req_…"
              spellcheck={false}
              autoComplete="off"
            />
            <button type="submit" class="button">
              Find
            </button>
            {byRequestId && (
              <button type="button" class="button ghost" onClick={() => setFilter({ requestId: '' })}>
                Clear
              </button>
            )}
          </div>
        </label>
      </form>
      <form class="filters" aria-label="Filters" onSubmit={(event) => event.preventDefault()}>
        {admin && (
          <SelectField
            label="Account"
            value={filters.account}
            onValue={(value) => setFilter({ account: value, key: '' })}
          >
            <option value="">All accounts</option>
            {accounts.map((account) => (
              <option key={account.id} value={account.id}>
                {account.name}
              </option>
            ))}
          </SelectField>
        )}
        <SelectField
          label="Key"
          value={filters.key}
          disabled={!scopeAccount}
          onValue={(value) => setFilter({ key: value })}
        >
          <option value="">{scopeAccount ? 'Any key' : 'Any key (choose an account)'}</option>
          {(keys.data ?? []).map((key) => (
            <option key={key.id} value={key.id}>
              {key.name} ({key.display}){key.status === 'revoked' ? ', revoked' : ''}
            </option>
          ))}
        </SelectField>
        <label class="field">
          <span>Key environment</span>
          <input
            list="log-environments"
            key={filters.environment}
            defaultValue={filters.environment}
            placeholder="Any"
            maxLength={100}
            onChange={(event) => setFilter({ environment: event.currentTarget.value.trim() })}
          />
          <datalist id="log-environments">
            {environments.map((environment) => (
              <option key={environment} value={environment} />
            ))}
          </datalist>
        </label>
        <SelectField label="Model" value={filters.model} onValue={(value) => setFilter({ model: value })}>
          <option value="">Any model</option>
          {filters.model && !(models.data ?? []).some((model) => model.id === filters.model) && (
            <option value={filters.model}>{filters.model}</option>
          )}
          {(models.data ?? []).map((model) => (
            <option key={model.id} value={model.id}>
              {model.id}
            </option>
          ))}
        </SelectField>
        <SelectField label="Provider" value={filters.provider} onValue={(value) => setFilter({ provider: value })}>
          <option value="">Any provider</option>
          {filters.provider && !providers.includes(filters.provider) && (
            <option value={filters.provider}>{filters.provider}</option>
          )}
          {providers.map((provider) => (
            <option key={provider} value={provider}>
              {provider}
            </option>
          ))}
        </SelectField>
        <SelectField label="Endpoint" value={filters.endpoint} onValue={(value) => setFilter({ endpoint: value })}>
          <option value="">Any endpoint</option>
          {filters.endpoint && !(filters.endpoint in endpointPaths) && (
            <option value={filters.endpoint}>{filters.endpoint}</option>
          )}
          {Object.entries(endpointPaths).map(([endpoint, path]) => (
            <option key={endpoint} value={endpoint}>
              {path}
            </option>
          ))}
        </SelectField>
        <SelectField label="Status" value={filters.status} onValue={(value) => setFilter({ status: value })}>
          {statusChoices.map((choice) => (
            <option key={choice.value} value={choice.value}>
              {choice.label}
            </option>
          ))}
        </SelectField>
        <label class="field">
          <span>Slower than (ms)</span>
          <input
            type="number"
            min={0}
            step={100}
            inputMode="numeric"
            placeholder="Any"
            key={filters.minLatencyMs}
            defaultValue={filters.minLatencyMs}
            onChange={(event) => {
              const value = event.currentTarget.value.trim();
              setFilter({ minLatencyMs: /^\d{1,9}$/.test(value) ? String(Number(value)) : '' });
            }}
          />
        </label>
        <SelectField
          label="Time"
          value={filters.range}
          disabled={byRequestId}
          title={byRequestId ? 'A request id is looked up at any time' : undefined}
          onValue={(value) => setFilter({ range: value })}
        >
          {Object.entries(ranges).map(([value, range]) => (
            <option key={value} value={value}>
              {range.label}
            </option>
          ))}
        </SelectField>
        {filters.range === 'custom' && (
          <>
            <label class="field">
              <span>From</span>
              <input
                type="datetime-local"
                value={filters.from ? toLocalInput(filters.from) : ''}
                onChange={(event) => setFilter({ from: fromLocalInput(event.currentTarget.value) })}
              />
            </label>
            <label class="field">
              <span>To</span>
              <input
                type="datetime-local"
                value={filters.to ? toLocalInput(filters.to) : ''}
                onChange={(event) => setFilter({ to: fromLocalInput(event.currentTarget.value) })}
              />
            </label>
          </>
        )}
      </form>
      <ErrorMessage error={first.error} />
      {first.loading && !first.data ? (
        <Loading />
      ) : rows.length === 0 ? (
        <p class="empty">
          {byRequestId
            ? `No request with the id "${filters.requestId}"${admin ? '' : ' in this account'} matches these filters.`
            : 'No requests match these filters.'}
        </p>
      ) : (
        <DataTable label="Requests" class="log-table" busy={first.loading}>
          <thead>
            <tr>
              <th scope="col">Time</th>
              {admin && <th scope="col">Account</th>}
              <th scope="col">Key</th>
              <th scope="col">Model</th>
              <th scope="col">Status</th>
              <th scope="col" class="number">
                Latency
              </th>
              <th scope="col" class="number hide-medium">
                TTFT
              </th>
              <th scope="col" class="number hide-narrow">
                Tokens in / out
              </th>
              <th scope="col" class="number">
                Cost
              </th>
            </tr>
          </thead>
          <tbody>
            {rows.map((entry) => (
              <tr key={entry.id} data-request-id={entry.requestId}>
                <td class="nowrap" data-label="Time">
                  <Link href={detailPath(entry)} title={formatTime(entry.time)}>
                    {formatCompactTime(entry.time)}
                  </Link>
                </td>
                {admin && (
                  <td class="wrap-anywhere" data-label="Account">
                    {accountName(entry.accountId)}
                  </td>
                )}
                <td class="wrap-anywhere" data-label="Key">
                  {keyLabel(entry.keyId, entry.keyName)}
                </td>
                <td class="wrap-anywhere" data-label="Model">
                  <span class="cell-stack">
                    <span>
                      {entry.model || <span class="muted">–</span>}
                      {entry.stream && <span class="muted small"> stream</span>}
                    </span>
                    {entry.endpoint && entry.endpoint !== 'chat_completions' && (
                      <span class="cell-note">{formatEndpoint(entry.endpoint)}</span>
                    )}
                  </span>
                </td>
                <td data-label="Status">
                  <span class="cell-stack">
                    {statusBadge(entry, { withCode: false })}
                    {entry.error?.code && (
                      <span class="cell-note">
                        <Breakable text={entry.error.code} />
                      </span>
                    )}
                  </span>
                </td>
                <td class="number" data-label="Latency">
                  {formatMs(entry.latencyMs)}
                </td>
                <td class="number hide-medium" data-label="TTFT">
                  {formatMs(entry.ttftMs)}
                </td>
                <td class="number hide-narrow" data-label="Tokens in / out">
                  {entry.usage.promptTokens === null && entry.usage.completionTokens === null
                    ? '–'
                    : `${formatInteger(entry.usage.promptTokens ?? 0)} / ${formatInteger(entry.usage.completionTokens ?? 0)}`}
                  {entry.usage.estimated && (
                    <abbr title="Estimated: the upstream reported no usage" class="muted">
                      {' '}
                      est.
                    </abbr>
                  )}
                </td>
                <td class="number" data-label="Cost">
                  <Cost entry={entry} />
                </td>
              </tr>
            ))}
          </tbody>
        </DataTable>
      )}
      <UnknownCostLegend rows={rows} />
      <ErrorMessage error={olderError} />
      {older.cursor && (
        <div class="load-more">
          <button
            type="button"
            class="button"
            disabled={loadingOlder}
            onClick={async () => {
              setLoadingOlder(true);
              setOlderError(undefined);
              try {
                const page = await api.get<LogPage>(
                  `${listPath}${queryString({ ...(lastQuery.current ?? apiQuery()), cursor: older.cursor })}`,
                );
                setOlder({
                  rows: [...older.rows, ...page.data],
                  keys: [...older.keys, ...page.keys],
                  cursor: page.nextCursor,
                });
              } catch (failure) {
                setOlderError(failure);
              } finally {
                setLoadingOlder(false);
              }
            }}
          >
            {loadingOlder ? 'Loading…' : 'Load older requests'}
          </button>
        </div>
      )}
    </>
  );
}

/** A request's cost; "–" says why it is unknown when pointed at (and the legend below the table says it in words). */
function Cost(props: { entry: LogEntryView }) {
  const reason = unknownCostReason(props.entry);
  if (!reason) return <>{formatCost(props.entry.costUsd, props.entry.outcome)}</>;
  return (
    <abbr title={reason.text} data-cost-unknown>
      –
    </abbr>
  );
}

/** What "–" in the Cost column means for the rows shown: the models without prices, named as the limits page does. */
function UnknownCostLegend(props: { rows: LogEntryView[] }) {
  const reasons = props.rows.map(unknownCostReason);
  const unpriced = [...new Set(reasons.map((reason) => reason?.unpricedModel).filter((model) => model !== undefined))];
  const noModel = reasons.some((reason) => reason !== undefined && reason.unpricedModel === undefined);
  if (unpriced.length === 0 && !noModel) return null;
  return (
    <p class="muted small" data-cost-legend>
      A cost of “–”:{' '}
      {unpriced.length > 0 &&
        `no price is configured for ${unpriced.sort().join(', ')}, so requests to ${unpriced.length === 1 ? 'it' : 'them'} cost $0 against every budget, which does not cap them. `}
      {noModel && 'A request that called no model (a model list) has nothing to price.'}
    </p>
  );
}
