import { useState } from 'preact/hooks';
import { useApp } from '../context.js';
import { formatInteger, formatRelative, formatShortTime } from '../format.js';
import type { AccountView, ApiKeyView, BudgetView } from '../types.js';
import { useAction } from '../use-action.js';
import { Dialog, ErrorMessage } from './common.js';

/**
 * Rate limits and budgets as the console shows and edits them: spend bars for budgets (the current period's spend, the
 * reset time), the five limits with who set them, and the dialogs that change them. The rules are the server's
 * (src/limits/key-limits.ts): an operator sets anything; an account owner may tighten a key's limit below what the
 * operator set (or the configured default), never loosen or remove it; members read.
 */

export type LimitField =
  | 'requestsPerMinute'
  | 'tokensPerMinute'
  | 'concurrentRequests'
  | 'dailyBudgetUsd'
  | 'monthlyBudgetUsd';
type Limits = Partial<Record<LimitField, number | null>>;

export const limitFields: Array<{ field: LimitField; label: string; unit: string; dollars: boolean }> = [
  { field: 'requestsPerMinute', label: 'Requests per minute', unit: 'requests', dollars: false },
  { field: 'tokensPerMinute', label: 'Tokens per minute', unit: 'tokens', dollars: false },
  { field: 'concurrentRequests', label: 'Concurrent requests', unit: 'at once', dollars: false },
  { field: 'dailyBudgetUsd', label: 'Daily budget', unit: 'US$ per UTC day', dollars: true },
  { field: 'monthlyBudgetUsd', label: 'Monthly budget', unit: 'US$ per UTC month', dollars: true },
];

/** What reaching each kind of limit does, in the words a holder needs. */
export const atRateLimit =
  'Over a rate limit, a request is refused with HTTP 429 rate_limit_exceeded and a retry-after header saying when ' +
  'to try again (the OpenAI and Anthropic SDKs wait and retry by themselves). Requests and tokens are counted over a ' +
  'sliding minute.';

const formatDollars = (value: number) =>
  value >= 100 ? `$${value.toFixed(0)}` : value >= 0.01 ? `$${value.toFixed(2)}` : `$${Number(value.toPrecision(3))}`;

/** A limit as shown; one left unset reads as the configured default it follows, with that default's value. */
export function formatLimit(field: LimitField, value: number | null | undefined, fallback?: number | null): string {
  if (value === undefined) {
    if (fallback === undefined) return 'Default';
    return `Default: ${fallback === null ? 'no limit' : formatLimit(field, fallback)}`;
  }
  if (value === null) return 'No limit';
  return field.endsWith('BudgetUsd') ? formatDollars(value) : formatInteger(value);
}

/** One budget's spend in its current period, as a bar, with when it resets. */
export function BudgetBar(props: { budget: BudgetView; compact?: boolean }) {
  const { budget } = props;
  const fraction = budget.limitUsd === 0 ? 1 : Math.min(1, budget.spentUsd / budget.limitUsd);
  const period = budget.period === 'day' ? 'Today' : 'This month';
  const label = `${period}: ${formatDollars(budget.spentUsd)} of ${formatDollars(budget.limitUsd)}`;
  const reset = `${budget.exceeded ? 'Reached: refused until' : 'Resets'} ${formatRelative(budget.resetsAt)} (${formatShortTime(budget.resetsAt)})`;
  return (
    <div class={`budget${props.compact ? ' compact' : ''}`} data-budget={budget.period}>
      <div class="budget-text">
        <span>{label}</span>
        <span class="muted small">{Math.round(fraction * 100)}%</span>
      </div>
      <meter
        class="budget-bar"
        aria-label={`${budget.period === 'day' ? 'Daily' : 'Monthly'} budget: ${formatDollars(budget.spentUsd)} spent of ${formatDollars(budget.limitUsd)}`}
        min={0}
        max={Math.max(budget.limitUsd, 0.000_001)}
        low={budget.limitUsd * 0.8}
        high={budget.limitUsd * 0.999}
        optimum={0}
        value={Math.min(budget.spentUsd, budget.limitUsd)}
      />
      <p class={`budget-reset small${budget.exceeded ? ' bad-text' : ' muted'}`} title={budget.resetsAt}>
        {reset}
      </p>
    </div>
  );
}

/** The limits set on an account or key, and who set each (a key's). */
export function LimitsList(props: {
  limits: Limits;
  /** The configured defaults that unset limits follow. */
  defaults: Limits;
  setBy?: ApiKeyView['limitsSetBy'];
  operatorLimits?: Limits;
}) {
  return (
    <dl class="limits-list">
      {limitFields.map(({ field, label }) => {
        const setter = props.setBy?.[field];
        const operator = props.operatorLimits?.[field];
        return (
          <div key={field} data-limit={field}>
            <dt>{label}</dt>
            <dd>
              {formatLimit(field, props.limits[field], props.defaults[field])}
              {setter && (
                <span class="muted small"> set by {setter.role === 'operator' ? 'the operator' : 'an owner'}</span>
              )}
              {operator !== undefined && operator !== null && setter?.role === 'owner' && (
                <span class="muted small"> (operator's bound: {formatLimit(field, operator)})</span>
              )}
            </dd>
          </div>
        );
      })}
    </dl>
  );
}

/** Text fields for the five limits; empty means "no limit". Only changed fields are sent. */
function LimitsForm(props: {
  initial: Limits;
  defaults: Limits;
  bounds?: Limits;
  setBy?: ApiKeyView['limitsSetBy'];
  submitLabel: string;
  note: string;
  onSubmit: (change: Limits) => Promise<void>;
  onCancel: () => void;
}) {
  const startText = (value: number | null | undefined) => (value === undefined || value === null ? '' : String(value));
  const [values, setValues] = useState<Record<LimitField, string>>(
    Object.fromEntries(limitFields.map(({ field }) => [field, startText(props.initial[field])])) as Record<
      LimitField,
      string
    >,
  );
  const { busy, error, setError, run } = useAction();
  return (
    <form
      onSubmit={async (event) => {
        event.preventDefault();
        setError(undefined);
        const change: Limits = {};
        for (const { field, label, dollars } of limitFields) {
          const text = values[field].trim();
          if (text === startText(props.initial[field])) continue;
          if (text === '') {
            change[field] = null;
            continue;
          }
          const value = Number(text);
          if (!Number.isFinite(value) || value < 0 || (!dollars && (!Number.isInteger(value) || value < 1))) {
            setError(
              new Error(
                dollars
                  ? `${label}: give an amount of dollars, 0 or more.`
                  : `${label}: give a whole number, 1 or more.`,
              ),
            );
            return;
          }
          change[field] = value;
        }
        if (Object.keys(change).length === 0) {
          props.onCancel();
          return;
        }
        await run(async () => {
          await props.onSubmit(change);
        });
      }}
    >
      <p class="muted small">{props.note}</p>
      <div class="limits-form">
        {limitFields.map(({ field, label, unit, dollars }) => {
          const bound = props.bounds?.[field];
          return (
            <label class="field" key={field}>
              <span>{label}</span>
              <div class="input-with-unit">
                <input
                  type="number"
                  inputMode={dollars ? 'decimal' : 'numeric'}
                  min={dollars ? 0 : 1}
                  step={dollars ? 'any' : 1}
                  max={bound ?? undefined}
                  placeholder={
                    props.initial[field] === undefined
                      ? formatLimit(field, undefined, props.defaults[field]).toLowerCase()
                      : 'no limit'
                  }
                  value={values[field]}
                  onInput={(event) => setValues({ ...values, [field]: event.currentTarget.value })}
                />
                <span class="muted small">{unit}</span>
              </div>
              {bound !== undefined && bound !== null && (
                <small>At most {formatLimit(field, bound)}: the operator's bound.</small>
              )}
              {props.setBy?.[field] && (
                <small>Set by {props.setBy[field]?.role === 'operator' ? 'the operator' : 'an owner'}.</small>
              )}
            </label>
          );
        })}
      </div>
      <ErrorMessage error={error} />
      <div class="dialog-actions">
        <button type="button" class="button" onClick={props.onCancel}>
          Cancel
        </button>
        <button type="submit" class="button primary" disabled={busy}>
          {props.submitLabel}
        </button>
      </div>
    </form>
  );
}

export function KeyLimitsDialog(props: { accountId: string; apiKey: ApiKeyView; onClose: (changed: boolean) => void }) {
  const { api, session } = useApp();
  const operator = session.user.admin;
  return (
    <Dialog title={`Limits of "${props.apiKey.name}"`} onClose={() => props.onClose(false)}>
      <LimitsForm
        initial={props.apiKey.limits}
        defaults={session.limitDefaults.key}
        bounds={operator ? undefined : props.apiKey.operatorLimits}
        setBy={props.apiKey.limitsSetBy}
        submitLabel="Save limits"
        note={
          operator
            ? 'As the operator you may set any limit; what you set bounds the account owners. Empty: no limit.'
            : "You may set a limit lower than the operator's (or the configured default), not higher and not none. A key is admitted against its own limits and its account's together. Empty: no limit."
        }
        onCancel={() => props.onClose(false)}
        onSubmit={async (change) => {
          await api.patch(`/accounts/${props.accountId}/keys/${props.apiKey.id}/limits`, change);
          props.onClose(true);
        }}
      />
    </Dialog>
  );
}

export function AccountLimitsDialog(props: { account: AccountView; onClose: (changed: boolean) => void }) {
  const { api, session } = useApp();
  return (
    <Dialog title={`Limits of account ${props.account.name}`} onClose={() => props.onClose(false)}>
      <LimitsForm
        initial={props.account.limits}
        defaults={session.limitDefaults.account}
        submitLabel="Save limits"
        note="They apply to all of the account's keys together, on top of each key's own. Empty: no limit."
        onCancel={() => props.onClose(false)}
        onSubmit={async (change) => {
          await api.patch(`/accounts/${props.account.id}`, { limits: change });
          props.onClose(true);
        }}
      />
    </Dialog>
  );
}
