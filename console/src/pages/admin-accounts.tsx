import { useState } from 'preact/hooks';
import { Badge, Dialog, ErrorMessage, Link, Loaded, PageHeader, RelativeTime } from '../components/common.js';
import { ActionsHeader, DataTable, RowButton } from '../components/data-table.js';
import { TextField } from '../components/fields.js';
import { useApp } from '../context.js';
import { formatCost, formatInteger } from '../format.js';
import type { AccountsUsageView, AccountView, AdminModelView } from '../types.js';
import { useAction } from '../use-action.js';
import { useAsync } from '../use-async.js';

/** Operator: every account; create one, set its models, disable it, turn body logging on or off. */

function ModelPicker(props: { models: AdminModelView[]; value: string[]; onChange: (models: string[]) => void }) {
  const all = props.value.includes('*');
  return (
    <fieldset class="field">
      <legend>Models the account may call</legend>
      <label class="radio">
        <input type="radio" checked={all} onChange={() => props.onChange(['*'])} />
        Every configured model, including ones added later
      </label>
      <label class="radio">
        <input type="radio" checked={!all} onChange={() => props.onChange([])} />
        Only these:
      </label>
      {!all && (
        <div class="checkbox-grid">
          {props.models.map((model) => (
            <label class="checkbox" key={model.id}>
              <input
                type="checkbox"
                checked={props.value.includes(model.id)}
                onChange={(event) =>
                  props.onChange(
                    event.currentTarget.checked
                      ? [...props.value, model.id]
                      : props.value.filter((candidate) => candidate !== model.id),
                  )
                }
              />
              {model.id} <span class="muted small">({model.provider})</span>
            </label>
          ))}
        </div>
      )}
    </fieldset>
  );
}

function EditAccountDialog(props: {
  account: AccountView | undefined;
  models: AdminModelView[];
  onClose: (changed: boolean) => void;
}) {
  const { api } = useApp();
  const creating = props.account === undefined;
  const [name, setName] = useState(props.account?.name ?? '');
  const [models, setModels] = useState<string[]>(props.account?.models ?? ['*']);
  const [disabled, setDisabled] = useState(props.account?.disabled ?? false);
  const [logBodies, setLogBodies] = useState(props.account?.logBodies ?? false);
  const { busy, error, run } = useAction();
  return (
    <Dialog
      title={creating ? 'Create an account' : `Account ${props.account?.name}`}
      onClose={() => props.onClose(false)}
    >
      <form
        onSubmit={async (event) => {
          event.preventDefault();
          await run(async () => {
            if (creating) await api.post('/accounts', { name: name.trim(), models, logBodies });
            else await api.patch(`/accounts/${props.account?.id}`, { models, disabled, logBodies });
            props.onClose(true);
          });
        }}
      >
        {creating && (
          <TextField
            label="Name"
            required
            pattern="[A-Za-z0-9][A-Za-z0-9._\-]{0,63}"
            title="1-64 letters, digits, '.', '_' or '-', starting with a letter or digit"
            value={name}
            onValue={setName}
          />
        )}
        <ModelPicker models={props.models} value={models} onChange={setModels} />
        <label class="checkbox">
          <input type="checkbox" checked={logBodies} onChange={(event) => setLogBodies(event.currentTarget.checked)} />
          Keep request and response bodies in this account's log
        </label>
        {!creating && (
          <label class="checkbox">
            <input type="checkbox" checked={disabled} onChange={(event) => setDisabled(event.currentTarget.checked)} />
            Disabled: every key of the account is refused (403)
          </label>
        )}
        <ErrorMessage error={error} />
        <div class="dialog-actions">
          <button type="button" class="button" onClick={() => props.onClose(false)}>
            Cancel
          </button>
          <button type="submit" class="button primary" disabled={busy}>
            {creating ? 'Create account' : 'Save'}
          </button>
        </div>
      </form>
    </Dialog>
  );
}

export function AdminAccountsPage() {
  const { api, reloadAccounts } = useApp();
  const accounts = useAsync(() => api.get<AccountView[]>('/accounts'), []);
  const models = useAsync(() => api.get<AdminModelView[]>('/models'), []);
  const usage = useAsync(() => api.get<AccountsUsageView>('/usage/accounts?days=30'), []);
  const usageOf = (id: string) => usage.data?.accounts.find((entry) => entry.accountId === id);
  const [editing, setEditing] = useState<{ account?: AccountView }>();
  return (
    <>
      <PageHeader
        title="All accounts"
        description="Accounts are the operator's customers: each has its own keys, models and log."
      >
        <button type="button" class="button primary" onClick={() => setEditing({})}>
          Create account
        </button>
      </PageHeader>
      <ErrorMessage error={accounts.error ?? usage.error} />
      {usage.data && (
        <p class="summary-line" data-testid="accounts-spend-total">
          Last 30 days, all accounts: <strong>{formatCost(usage.data.totals.costUsd)}</strong> spent on{' '}
          <strong>{formatInteger(usage.data.totals.requests)}</strong> requests (
          {formatInteger(usage.data.totals.errors)} errors). <Link href="/admin/usage?span=30d">Usage over time</Link>
        </p>
      )}
      <Loaded state={accounts}>
        {(list) => (
          <DataTable label="Accounts">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Status</th>
                <th scope="col" class="hide-narrow">
                  Models
                </th>
                <th scope="col" class="hide-narrow">
                  Body logging
                </th>
                <th scope="col" class="hide-medium">
                  Created
                </th>
                <th scope="col" class="number">
                  Spend, 30 days
                </th>
                <th scope="col" class="number">
                  Requests, 30 days
                </th>
                <ActionsHeader />
              </tr>
            </thead>
            <tbody>
              {list.map((account) => (
                <tr key={account.id}>
                  <td data-label="Name">
                    <Link href={`/accounts/${account.id}/keys`}>{account.name}</Link>
                  </td>
                  <td data-label="Status">
                    {account.disabled ? <Badge tone="bad">Disabled</Badge> : <Badge tone="good">Active</Badge>}
                  </td>
                  <td class="hide-narrow wrap-anywhere" data-label="Models">
                    {account.models.includes('*') ? (
                      <span class="muted">All</span>
                    ) : (
                      account.models.join(', ') || 'None'
                    )}
                  </td>
                  <td class="hide-narrow" data-label="Body logging">
                    {account.logBodies ? 'On' : 'Off'}
                  </td>
                  <td class="hide-medium" data-label="Created">
                    <RelativeTime iso={account.createdAt} />
                  </td>
                  <td class="number" data-label="Spend, 30 days">
                    {usageOf(account.id) ? formatCost(usageOf(account.id)?.costUsd) : '–'}
                  </td>
                  <td class="number" data-label="Requests, 30 days">
                    {usageOf(account.id) ? (
                      <Link href={`/accounts/${account.id}/usage?span=30d`}>
                        {formatInteger(usageOf(account.id)?.requests ?? 0)}
                      </Link>
                    ) : (
                      '–'
                    )}
                    {(usageOf(account.id)?.errors ?? 0) > 0 && (
                      <span class="cell-note">{formatInteger(usageOf(account.id)?.errors ?? 0)} errors</span>
                    )}
                  </td>
                  <td class="actions">
                    <RowButton label={`Edit ${account.name}`} onClick={() => setEditing({ account })}>
                      Edit
                    </RowButton>
                    <Link class="button small ghost" href={`/accounts/${account.id}/limits`}>
                      Limits
                    </Link>
                  </td>
                </tr>
              ))}
            </tbody>
          </DataTable>
        )}
      </Loaded>
      {editing && (
        <EditAccountDialog
          account={editing.account}
          models={models.data ?? []}
          onClose={(changed) => {
            setEditing(undefined);
            if (changed) {
              accounts.reload();
              void reloadAccounts();
            }
          }}
        />
      )}
    </>
  );
}
