import { useState } from 'preact/hooks';
import { ErrorMessage, Loaded, PageHeader } from '../components/common.js';
import { ActionsHeader, DataTable, RowButton } from '../components/data-table.js';
import {
  AccountLimitsDialog,
  atRateLimit,
  BudgetBar,
  formatLimit,
  KeyLimitsDialog,
  LimitsList,
  limitFields,
} from '../components/limits.js';
import { useApp } from '../context.js';
import { keyLabeller } from '../key-labels.js';
import type { ApiKeyView, BudgetsView } from '../types.js';
import { useAsync } from '../use-async.js';

/**
 * An account's rate limits and budgets: the account's own (set by the operator) and each live key's (set by the
 * owners within the operator's bounds), with every budget's spend in its current period and what happens at a limit.
 */
export function LimitsPage(props: { accountId: string }) {
  const { api, accounts, session, reloadAccounts } = useApp();
  const account = accounts.find((candidate) => candidate.id === props.accountId);
  const budgets = useAsync(() => api.get<BudgetsView>(`/accounts/${props.accountId}/budgets`), [props.accountId]);
  const keys = useAsync(() => api.get<ApiKeyView[]>(`/accounts/${props.accountId}/keys`), [props.accountId]);
  const [editing, setEditing] = useState<{ kind: 'account' } | { kind: 'key'; key: ApiKeyView }>();
  const operator = session.user.admin;
  const owner = operator || account?.role === 'owner';
  const live = (keys.data ?? []).filter((key) => key.status === 'active' || key.status === 'expiring');
  const label = keyLabeller(keys.data ?? []);
  const budgetsOf = (keyId: string) => budgets.data?.keys.find((entry) => entry.keyId === keyId)?.budgets ?? [];
  const reload = () => {
    budgets.reload();
    keys.reload();
  };

  if (!account) return null;
  return (
    <>
      <PageHeader
        title="Limits and budgets"
        description={
          owner
            ? 'Rate limits and spending caps for the account and each key. A key is admitted against its own limits and the account’s together.'
            : 'Rate limits and spending caps for the account and each key. Owners and the operator change them; members read them.'
        }
      >
        <button type="button" class="button" onClick={reload}>
          Refresh
        </button>
      </PageHeader>
      <ErrorMessage error={budgets.error ?? keys.error} />
      <section class="card" aria-labelledby="account-limits">
        <div class="card-header">
          <h2 id="account-limits">Account {account.name}</h2>
          {operator && (
            <button type="button" class="button small" onClick={() => setEditing({ kind: 'account' })}>
              Edit account limits
            </button>
          )}
        </div>
        <Loaded state={budgets}>
          {(spending) =>
            spending.account.budgets.length === 0 ? (
              <p class="muted">No budget: the account's spending is not capped.</p>
            ) : (
              <div class="budgets">
                {spending.account.budgets.map((budget) => (
                  <BudgetBar key={budget.period} budget={budget} />
                ))}
              </div>
            )
          }
        </Loaded>
        <LimitsList limits={account.limits} defaults={session.limitDefaults.account} />
        {!operator && <p class="muted small">Only the operator sets the account's limits.</p>}
      </section>
      <section class="card" aria-labelledby="at-the-limit">
        <h2 id="at-the-limit">At a limit</h2>
        <p>{budgets.data?.atLimit ?? ''}</p>
        <p>{atRateLimit}</p>
        {(budgets.data?.unpricedModels.length ?? 0) > 0 && (
          <p data-unpriced-models>
            No prices are configured for {budgets.data?.unpricedModels.join(', ')}: requests to them cost $0 against
            every budget, which does not cap them.
          </p>
        )}
      </section>
      <section class="card" aria-labelledby="key-limits">
        <h2 id="key-limits">Keys</h2>
        <Loaded state={keys}>
          {() =>
            live.length === 0 ? (
              <p class="muted">No active keys.</p>
            ) : (
              <DataTable label="Key limits">
                <thead>
                  <tr>
                    <th scope="col">Key</th>
                    <th scope="col">Budgets this period</th>
                    {limitFields
                      .filter(({ dollars }) => !dollars)
                      .map(({ field, label: heading }) => (
                        <th scope="col" class="number hide-medium" key={field}>
                          {heading}
                        </th>
                      ))}
                    <ActionsHeader />
                  </tr>
                </thead>
                <tbody>
                  {live.map((key) => (
                    <tr key={key.id} data-key-id={key.id}>
                      <td class="wrap-anywhere" data-label="Key">
                        {label(key.id, key.name)}
                      </td>
                      <td data-label="Budgets" class="budget-cell">
                        {budgetsOf(key.id).length === 0 ? (
                          <span class="muted">None</span>
                        ) : (
                          budgetsOf(key.id).map((budget) => <BudgetBar key={budget.period} budget={budget} compact />)
                        )}
                      </td>
                      {limitFields
                        .filter(({ dollars }) => !dollars)
                        .map(({ field, label: heading }) => (
                          <td class="number hide-medium" data-label={heading} key={field}>
                            {formatLimit(field, key.limits[field], session.limitDefaults.key[field])}
                          </td>
                        ))}
                      <td class="actions">
                        {owner && (
                          <RowButton
                            label={`Edit limits of ${key.name}`}
                            onClick={() => setEditing({ kind: 'key', key })}
                          >
                            Edit limits
                          </RowButton>
                        )}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </DataTable>
            )
          }
        </Loaded>
        <p class="muted small">
          "Default": not set on the key, so the operator's configured default for keys applies (its value follows).
        </p>
      </section>
      {editing?.kind === 'account' && (
        <AccountLimitsDialog
          account={account}
          onClose={(changed) => {
            setEditing(undefined);
            if (changed) {
              void reloadAccounts();
              reload();
            }
          }}
        />
      )}
      {editing?.kind === 'key' && (
        <KeyLimitsDialog
          accountId={props.accountId}
          apiKey={editing.key}
          onClose={(changed) => {
            setEditing(undefined);
            if (changed) reload();
          }}
        />
      )}
    </>
  );
}
