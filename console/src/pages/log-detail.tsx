import type { ComponentChildren } from 'preact';
import { Badge, Breakable, ErrorMessage, Link, Loading, PageHeader } from '../components/common.js';
import { DataTable } from '../components/data-table.js';
import { useApp } from '../context.js';
import { formatCost, formatEndpoint, formatInteger, formatMs, formatTime, unknownCostReason } from '../format.js';
import { assembleStream } from '../stream-assembly.js';
import type { ApiKeyView, LogDetailView } from '../types.js';
import { useAsync } from '../use-async.js';
import { statusBadge } from './logs.js';

/** One request's full record, and its bodies when the operator turned body logging on for the account. */

function Row(props: { label: string; children: ComponentChildren }) {
  return (
    <>
      <dt>{props.label}</dt>
      <dd>{props.children}</dd>
    </>
  );
}

/** A body as text, scrollable by keyboard. */
function Pre(props: { children: string; label: string }) {
  return (
    // A scrollable region must be reachable by keyboard, or its overflow cannot be scrolled without a mouse.
    // biome-ignore lint/a11y/noNoninteractiveTabindex: keyboard users scroll long bodies
    <pre class="body" tabIndex={0} data-body={props.label}>
      {props.children}
    </pre>
  );
}

/**
 * Pretty-prints JSON bodies. A streamed response is shown as the message its events add up to, with the events as
 * they were sent one click away; anything else is shown as it is.
 */
function Body(props: { text: string | null; label: string }) {
  if (props.text === null) return <p class="muted">Not recorded.</p>;
  try {
    return <Pre label={props.label}>{JSON.stringify(JSON.parse(props.text), null, 2)}</Pre>;
  } catch {
    // not one JSON document: a stream, or a body that was not JSON
  }
  const assembled = assembleStream(props.text);
  if (!assembled) return <Pre label={props.label}>{props.text}</Pre>;
  return (
    <>
      <p class="muted small">
        Streamed as {formatInteger(assembled.events)} events, shown assembled into the message they add up to
        {assembled.incomplete ? ' (the stream ended before its last event: this is as far as it got)' : ''}.
      </p>
      <Pre label={`${props.label}, assembled`}>{JSON.stringify(assembled.message, null, 2)}</Pre>
      <details class="raw-stream">
        <summary>The events as streamed</summary>
        <Pre label={`${props.label}, as streamed`}>{props.text}</Pre>
      </details>
    </>
  );
}

/** Every upstream attempt the gateway made: retries on a model, its other deployments, then its fallbacks. */
function Attempts(props: { attempts: LogDetailView['attempts']; model: string }) {
  return (
    <section class="card">
      <h2>Attempts</h2>
      <p class="muted small">
        {props.attempts.length === 1
          ? 'Served at the first attempt.'
          : `${props.attempts.length} attempts: retries, other deployments of the model, then its fallbacks, in order.`}
      </p>
      <DataTable label="Attempts">
        <thead>
          <tr>
            <th scope="col">#</th>
            <th scope="col">Model</th>
            <th scope="col">Deployment</th>
            <th scope="col">Result</th>
            <th scope="col" class="number">
              Waited
            </th>
            <th scope="col" class="number">
              Time
            </th>
          </tr>
        </thead>
        <tbody>
          {props.attempts.map((attempt, index) => (
            <tr key={index}>
              <td data-label="Attempt">{index + 1}</td>
              <td class="wrap-anywhere" data-label="Model">
                <span class="cell-stack">
                  <span>{attempt.model}</span>
                  {attempt.model !== props.model && <span class="cell-note">fallback</span>}
                </span>
              </td>
              <td class="wrap-anywhere" data-label="Deployment">
                <code>
                  <Breakable text={attempt.deployment} />
                </code>
              </td>
              <td data-label="Result">
                <span class="cell-stack">
                  <Badge
                    tone={attempt.outcome === 'success' ? 'good' : attempt.outcome === 'skipped' ? 'neutral' : 'bad'}
                  >
                    {attempt.outcome === 'skipped' ? 'skipped' : attempt.status}
                  </Badge>
                  {attempt.code && (
                    <span class="cell-note">
                      <Breakable text={attempt.code} />
                    </span>
                  )}
                </span>
              </td>
              <td class="number" data-label="Waited before">
                {formatMs(attempt.waitedMs)}
              </td>
              <td class="number" data-label="Time">
                {formatMs(attempt.latencyMs)}
              </td>
            </tr>
          ))}
        </tbody>
      </DataTable>
    </section>
  );
}

function tokenSource(usage: LogDetailView['usage']): string {
  if (usage.promptTokens === null && usage.completionTokens === null) return 'None: no model produced tokens';
  return usage.estimated ? 'Estimated (the upstream reported none)' : 'Reported by the upstream';
}

export function LogDetailPage(props: { accountId?: string; requestId: string }) {
  const { api, accounts } = useApp();
  const path = props.accountId
    ? `/accounts/${props.accountId}/logs/${encodeURIComponent(props.requestId)}`
    : `/logs/${encodeURIComponent(props.requestId)}`;
  const entry = useAsync(() => api.get<LogDetailView>(path), [path]);
  const entryAccount = entry.data?.accountId;
  const keys = useAsync(
    () => (entryAccount ? api.get<ApiKeyView[]>(`/accounts/${entryAccount}/keys`) : Promise.resolve([])),
    [entryAccount],
  );
  const key = keys.data?.find((candidate) => candidate.id === entry.data?.keyId);
  const back = props.accountId ? `/accounts/${props.accountId}/logs` : '/admin/logs';
  const data = entry.data;
  return (
    <>
      <PageHeader title="Request" description={<code>{props.requestId}</code>}>
        <Link class="button" href={back}>
          Back to the log
        </Link>
      </PageHeader>
      <ErrorMessage error={entry.error} />
      {!data ? (
        !entry.error && <Loading />
      ) : (
        <>
          <section class="card">
            <dl class="details">
              <Row label="Time">{formatTime(data.time)}</Row>
              {!props.accountId && (
                <Row label="Account">
                  {accounts.find((account) => account.id === data.accountId)?.name ?? data.accountId}
                </Row>
              )}
              <Row label="Endpoint">
                <code>{formatEndpoint(data.endpoint)}</code>
              </Row>
              <Row label="Status">{statusBadge(data)}</Row>
              <Row label="Key">
                {data.keyName} <code class="muted">{key?.display ?? data.keyId}</code>
              </Row>
              <Row label="Model">{data.model || '–'}</Row>
              <Row label="Provider">
                {data.provider ?? '–'}
                {data.upstreamModel && data.upstreamModel !== data.model && (
                  <span class="muted"> (upstream model {data.upstreamModel})</span>
                )}
              </Row>
              {data.servedModel && data.servedModel !== data.model && (
                <Row label="Served by">
                  {data.servedModel} <span class="muted">(a fallback of {data.model})</span>
                </Row>
              )}
              <Row label="Streamed">{data.stream ? 'Yes' : 'No'}</Row>
              <Row label="Latency">{formatMs(data.latencyMs)}</Row>
              <Row label="Time to first token">{formatMs(data.ttftMs)}</Row>
              <Row label="Prompt tokens">
                {data.usage.promptTokens === null ? '–' : formatInteger(data.usage.promptTokens)}
                {data.usage.cachedTokens ? (
                  <span class="muted"> ({formatInteger(data.usage.cachedTokens)} cached)</span>
                ) : null}
              </Row>
              <Row label="Completion tokens">
                {data.usage.completionTokens === null ? '–' : formatInteger(data.usage.completionTokens)}
                {data.usage.reasoningTokens ? (
                  <span class="muted"> ({formatInteger(data.usage.reasoningTokens)} reasoning)</span>
                ) : null}
              </Row>
              <Row label="Token counts">{tokenSource(data.usage)}</Row>
              <Row label="Cost">
                {formatCost(data.costUsd, data.outcome)}
                {unknownCostReason(data) && <span class="muted small"> {unknownCostReason(data)?.text}</span>}
              </Row>
              <Row label="User agent">{data.userAgent ?? '–'}</Row>
            </dl>
          </section>
          {data.attempts.length > 0 && <Attempts attempts={data.attempts} model={data.model} />}
          {data.error && (
            <section class="card">
              <h2>Error</h2>
              <dl class="details">
                <Row label="Type">{data.error.type ?? '–'}</Row>
                <Row label="Code">{data.error.code ?? '–'}</Row>
                <Row label="Message">{data.error.message ?? '–'}</Row>
              </dl>
            </section>
          )}
          <section class="card">
            <h2>Bodies</h2>
            {data.bodiesLogged ? (
              <>
                <h3>Request</h3>
                <Body text={data.requestBody} label="Request body" />
                <h3>Response</h3>
                <Body text={data.responseBody} label="Response body" />
              </>
            ) : (
              <p class="muted">
                Request and response bodies are not kept for this account. The operator can turn body logging on.
              </p>
            )}
          </section>
        </>
      )}
    </>
  );
}
