import type { ComponentChildren } from 'preact';
import { ErrorMessage, Link, Loading, PageHeader } from '../components/common.js';
import { useApp } from '../context.js';
import { formatCost, formatEndpoint, formatInteger, formatMs, formatTime } from '../format.js';
import type { LogDetailView } from '../types.js';
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

/** Pretty-prints JSON bodies; anything else is shown as it is. */
function Body(props: { text: string | null }) {
  if (props.text === null) return <p class="muted">Not recorded.</p>;
  let shown = props.text;
  try {
    shown = JSON.stringify(JSON.parse(props.text), null, 2);
  } catch {
    // streamed responses are SSE text, not one JSON document
  }
  return (
    // A scrollable region must be reachable by keyboard, or its overflow cannot be scrolled without a mouse.
    // biome-ignore lint/a11y/noNoninteractiveTabindex: keyboard users scroll long bodies
    <pre class="body" tabIndex={0}>
      {shown}
    </pre>
  );
}

export function LogDetailPage(props: { accountId?: string; requestId: string }) {
  const { api, accounts } = useApp();
  const path = props.accountId
    ? `/accounts/${props.accountId}/logs/${encodeURIComponent(props.requestId)}`
    : `/logs/${encodeURIComponent(props.requestId)}`;
  const entry = useAsync(() => api.get<LogDetailView>(path), [path]);
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
                {data.keyName} <code class="muted">{data.keyId}</code>
              </Row>
              <Row label="Model">{data.model || '–'}</Row>
              <Row label="Provider">
                {data.provider ?? '–'}
                {data.upstreamModel && data.upstreamModel !== data.model && (
                  <span class="muted"> (upstream model {data.upstreamModel})</span>
                )}
              </Row>
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
              <Row label="Token counts">
                {data.usage.estimated ? 'Estimated (the upstream reported none)' : 'Reported by the upstream'}
              </Row>
              <Row label="Cost">{formatCost(data.costUsd)}</Row>
              <Row label="User agent">{data.userAgent ?? '–'}</Row>
            </dl>
          </section>
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
                <Body text={data.requestBody} />
                <h3>Response</h3>
                <Body text={data.responseBody} />
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
