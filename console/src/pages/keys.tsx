import { useState } from 'preact/hooks';
import { CodeSamples } from '../components/code-sample.js';
import {
  Badge,
  ConfirmDialog,
  Dialog,
  ErrorMessage,
  Link,
  Loading,
  OneTimeSecretDialog,
  PageHeader,
  RelativeTime,
} from '../components/common.js';
import { ActionsHeader, DataTable, RowButton } from '../components/data-table.js';
import { SelectField, TextField } from '../components/fields.js';
import { BudgetBar, KeyLimitsDialog } from '../components/limits.js';
import { useApp } from '../context.js';
import { formatCost, formatInteger, formatTime } from '../format.js';
import type { ApiKeyView, BudgetsView, CreatedKeyView, KeysUsageView, ModelView, RotatedKeyView } from '../types.js';
import { useAction } from '../use-action.js';
import { useAsync } from '../use-async.js';

/** API keys: create (shown once), list, rotate with a grace period (new key shown once), revoke with confirmation. */

const statusTone = { active: 'good', expiring: 'warn', expired: 'neutral', revoked: 'bad' } as const;
const statusLabel = {
  active: 'Active',
  expiring: 'Rotated, expiring',
  expired: 'Expired',
  revoked: 'Revoked',
} as const;

const expiryChoices = [
  { value: 'never', label: 'Never' },
  { value: '7', label: 'In 7 days' },
  { value: '30', label: 'In 30 days' },
  { value: '90', label: 'In 90 days' },
  { value: '365', label: 'In 1 year' },
  { value: 'custom', label: 'On a date…' },
];

const graceChoices = [
  { value: 0, label: 'Immediately (the old key is exposed)' },
  { value: 3600, label: 'After 1 hour' },
  { value: 86_400, label: 'After 24 hours' },
  { value: 7 * 86_400, label: 'After 7 days' },
];

type Dialogs =
  | { kind: 'create' }
  | { kind: 'created'; key: CreatedKeyView }
  | { kind: 'rotate'; key: ApiKeyView }
  | { kind: 'rotated'; key: RotatedKeyView }
  | { kind: 'revoke'; key: ApiKeyView }
  | { kind: 'limits'; key: ApiKeyView }
  | { kind: 'revoke-by-value' };

export function KeysPage(props: { accountId: string }) {
  const { api, accounts, session } = useApp();
  const account = accounts.find((candidate) => candidate.id === props.accountId);
  // A disabled account's keys are all refused: a new or rotated key would not work either.
  const disabled = account?.disabled ?? false;
  const mayEditLimits = session.user.admin || account?.role === 'owner';
  const keys = useAsync(() => api.get<ApiKeyView[]>(`/accounts/${props.accountId}/keys`), [props.accountId]);
  const models = useAsync(() => api.get<ModelView[]>(`/accounts/${props.accountId}/models`), [props.accountId]);
  const usage = useAsync(
    () => api.get<KeysUsageView>(`/accounts/${props.accountId}/usage/keys?days=30`),
    [props.accountId],
  );
  const budgets = useAsync(() => api.get<BudgetsView>(`/accounts/${props.accountId}/budgets`), [props.accountId]);
  const usageOf = (keyId: string) => usage.data?.keys.find((entry) => entry.keyId === keyId);
  const budgetsOf = (keyId: string) => budgets.data?.keys.find((entry) => entry.keyId === keyId)?.budgets ?? [];
  const [dialog, setDialog] = useState<Dialogs>();
  const [showInactive, setShowInactive] = useState(false);
  const close = () => {
    setDialog(undefined);
    keys.reload();
    budgets.reload();
  };
  const list = (keys.data ?? []).filter((key) => showInactive || key.status === 'active' || key.status === 'expiring');
  const hidden = (keys.data?.length ?? 0) - list.length;

  return (
    <>
      <PageHeader
        title="API keys"
        description="Use one key per application and environment. A key is shown once, when it is created; rotate a key at once if it may have leaked."
      >
        <button type="button" class="button" onClick={() => setDialog({ kind: 'revoke-by-value' })}>
          Revoke a leaked key
        </button>
        {!disabled && (
          <button type="button" class="button primary" onClick={() => setDialog({ kind: 'create' })}>
            Create key
          </button>
        )}
      </PageHeader>
      <ErrorMessage error={keys.error} />
      {keys.loading && !keys.data ? (
        <Loading />
      ) : (
        <>
          <div class="toolbar">
            <label class="checkbox">
              <input
                type="checkbox"
                checked={showInactive}
                onChange={(event) => setShowInactive(event.currentTarget.checked)}
              />
              Show revoked and expired keys{hidden > 0 && !showInactive ? ` (${hidden})` : ''}
            </label>
          </div>
          {list.length === 0 ? (
            <p class="empty">
              {disabled ? (
                'No keys. Keys cannot be created while the account is disabled.'
              ) : (
                <>
                  No keys yet. Create one, then call <code>/v1/chat/completions</code> with it as a Bearer token.
                </>
              )}
            </p>
          ) : (
            <DataTable label="API keys">
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Key</th>
                  <th scope="col">Status</th>
                  <th scope="col" class="hide-narrow">
                    Models
                  </th>
                  <th scope="col" class="hide-below-wide">
                    Created
                  </th>
                  <th scope="col">Last used</th>
                  <th scope="col">Expires</th>
                  <th scope="col">Last 30 days</th>
                  <ActionsHeader />
                </tr>
              </thead>
              <tbody>
                {list.map((key) => (
                  <tr key={key.id} data-key-id={key.id}>
                    <td data-label="Name">
                      <strong>{key.name}</strong>
                      {key.environment && (
                        <>
                          {' '}
                          <Badge tone="info">{key.environment}</Badge>
                        </>
                      )}
                    </td>
                    <td class="nowrap" data-label="Key">
                      <code>{key.display}</code>
                    </td>
                    <td data-label="Status">
                      <Badge tone={statusTone[key.status]}>{statusLabel[key.status]}</Badge>
                    </td>
                    <td class="hide-narrow" data-label="Models">
                      {key.models === null ? <span class="muted">All</span> : key.models.join(', ')}
                    </td>
                    <td class="hide-below-wide" data-label="Created">
                      <RelativeTime iso={key.createdAt} />
                    </td>
                    <td data-label="Last used">
                      <RelativeTime iso={key.lastUsedAt} />
                    </td>
                    <td data-label="Expires">
                      <RelativeTime iso={key.expiresAt} never="Never" />
                    </td>
                    <td data-label="Last 30 days" class="key-spend">
                      <span class="cell-stack">
                        {usageOf(key.id) ? (
                          <span data-testid="key-spend">
                            <span class="nowrap">{formatCost(usageOf(key.id)?.costUsd)}</span> ·{' '}
                            <Link
                              href={`/accounts/${props.accountId}/logs?key=${key.id}&range=30d`}
                              title={`The log of ${key.name}`}
                            >
                              {formatInteger(usageOf(key.id)?.requests ?? 0)}{' '}
                              {usageOf(key.id)?.requests === 1 ? 'request' : 'requests'}
                            </Link>
                          </span>
                        ) : (
                          <span class="muted">–</span>
                        )}
                        {budgetsOf(key.id).map((budget) => (
                          <BudgetBar key={budget.period} budget={budget} compact />
                        ))}
                      </span>
                    </td>
                    <td class="actions">
                      {(key.status === 'active' || key.status === 'expiring') && (
                        <>
                          {key.status === 'active' && !disabled && (
                            <RowButton label={`Rotate ${key.name}`} onClick={() => setDialog({ kind: 'rotate', key })}>
                              Rotate
                            </RowButton>
                          )}
                          <RowButton
                            label={`Revoke ${key.name}`}
                            danger
                            onClick={() => setDialog({ kind: 'revoke', key })}
                          >
                            Revoke
                          </RowButton>
                        </>
                      )}
                      {mayEditLimits && (key.status === 'active' || key.status === 'expiring') && (
                        <RowButton label={`Limits of ${key.name}`} onClick={() => setDialog({ kind: 'limits', key })}>
                          Limits
                        </RowButton>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </DataTable>
          )}
        </>
      )}

      {dialog?.kind === 'create' && (
        <CreateKeyDialog
          accountId={props.accountId}
          models={models.data ?? []}
          onClose={close}
          onCreated={(key) => setDialog({ kind: 'created', key })}
        />
      )}
      {dialog?.kind === 'created' && (
        <OneTimeSecretDialog
          title={`Key "${dialog.key.name}" created`}
          label="Your new API key"
          value={dialog.key.key}
          warning="This is the only time the key is shown. Store it in your application's secret store; Switchboard keeps only a hash and cannot show it again."
          doneLabel="I have stored the key"
          onClose={close}
        >
          <CodeSamples
            apiKey={dialog.key.key}
            model={dialog.key.models?.[0] ?? models.data?.[0]?.id ?? 'gpt-4o-mini'}
          />
        </OneTimeSecretDialog>
      )}
      {dialog?.kind === 'rotate' && (
        <RotateKeyDialog
          accountId={props.accountId}
          apiKey={dialog.key}
          onClose={close}
          onRotated={(key) => setDialog({ kind: 'rotated', key })}
        />
      )}
      {dialog?.kind === 'rotated' && (
        <OneTimeSecretDialog
          title={`Key "${dialog.key.name}" rotated`}
          label="The new API key"
          value={dialog.key.key}
          warning="This is the only time the new key is shown. Replace the old key in your application with it."
          doneLabel="I have stored the key"
          onClose={close}
        >
          <p>
            The old key <code>{dialog.key.previous.display}</code>{' '}
            {dialog.key.previous.expiresAt && new Date(dialog.key.previous.expiresAt).getTime() > Date.now() + 5000
              ? `keeps working until ${formatTime(dialog.key.previous.expiresAt)}.`
              : 'no longer works.'}
          </p>
        </OneTimeSecretDialog>
      )}
      {dialog?.kind === 'revoke-by-value' && <RevokeByValueDialog onClose={close} />}
      {dialog?.kind === 'limits' && (
        <KeyLimitsDialog
          accountId={props.accountId}
          apiKey={dialog.key}
          onClose={(changed) => (changed ? close() : setDialog(undefined))}
        />
      )}
      {dialog?.kind === 'revoke' && (
        <ConfirmDialog
          title={`Revoke "${dialog.key.name}"?`}
          confirmLabel="Revoke key"
          onClose={() => setDialog(undefined)}
          onConfirm={async () => {
            await api.post(`/accounts/${props.accountId}/keys/${dialog.key.id}/revoke`);
            close();
          }}
        >
          <p>
            Every application using <code>{dialog.key.display}</code> will be refused (401) within a second. This cannot
            be undone.
          </p>
        </ConfirmDialog>
      )}
    </>
  );
}

/** Someone found a key (in a repository, a screenshot): they have its value, not its id. */
function RevokeByValueDialog(props: { onClose: () => void }) {
  const { api } = useApp();
  const [value, setValue] = useState('');
  const [revoked, setRevoked] = useState<ApiKeyView>();
  const { busy, error, run } = useAction();
  return (
    <Dialog title="Revoke a leaked key" onClose={props.onClose}>
      {revoked ? (
        <>
          <p role="status" class="success">
            Revoked "{revoked.name}" (<code>{revoked.display}</code>): every application using it is refused from now
            on.
          </p>
          <div class="dialog-actions">
            <button type="button" class="button primary" onClick={props.onClose}>
              Done
            </button>
          </div>
        </>
      ) : (
        <form
          onSubmit={async (event) => {
            event.preventDefault();
            await run(async () => {
              setRevoked(await api.post<ApiKeyView>('/keys/revoke', { key: value }));
              setValue('');
            });
          }}
        >
          <p>Paste the key as you found it. It is revoked at once, on every server; this cannot be undone.</p>
          <TextField
            label="The key (sk-sb-…)"
            type="password"
            autoComplete="off"
            spellcheck={false}
            required
            value={value}
            onValue={setValue}
          />
          <ErrorMessage error={error} />
          <div class="dialog-actions">
            <button type="button" class="button" onClick={props.onClose}>
              Cancel
            </button>
            <button type="submit" class="button danger" disabled={busy}>
              Revoke key
            </button>
          </div>
        </form>
      )}
    </Dialog>
  );
}

function CreateKeyDialog(props: {
  accountId: string;
  models: ModelView[];
  onClose: () => void;
  onCreated: (key: CreatedKeyView) => void;
}) {
  const { api } = useApp();
  const [name, setName] = useState('');
  const [environment, setEnvironment] = useState('');
  const [expiry, setExpiry] = useState('never');
  const [customDate, setCustomDate] = useState('');
  const [restrict, setRestrict] = useState(false);
  const [chosen, setChosen] = useState<string[]>([]);
  const { busy, error, setError, run } = useAction();

  const expiresAt = (): string | undefined => {
    if (expiry === 'never') return undefined;
    if (expiry === 'custom') return customDate ? new Date(`${customDate}T23:59:59`).toISOString() : undefined;
    return new Date(Date.now() + Number(expiry) * 86_400_000).toISOString();
  };

  return (
    <Dialog title="Create an API key" onClose={props.onClose}>
      <form
        onSubmit={async (event) => {
          event.preventDefault();
          setError(undefined);
          if (restrict && chosen.length === 0) {
            setError(new Error('Choose at least one model, or allow all of them.'));
            return;
          }
          if (expiry === 'custom' && !customDate) {
            setError(new Error('Choose the expiry date.'));
            return;
          }
          await run(async () => {
            const created = await api.post<CreatedKeyView>(`/accounts/${props.accountId}/keys`, {
              name: name.trim(),
              environment: environment.trim() || undefined,
              models: restrict ? chosen : undefined,
              expiresAt: expiresAt(),
            });
            props.onCreated(created);
          });
        }}
      >
        <TextField
          label="Name"
          required
          maxLength={100}
          placeholder="e.g. checkout-service"
          value={name}
          onValue={setName}
        >
          <small>What the key is for: the application that will use it.</small>
        </TextField>
        <TextField
          label="Environment"
          list="environment-suggestions"
          maxLength={50}
          placeholder="e.g. production"
          value={environment}
          onValue={setEnvironment}
        >
          <datalist id="environment-suggestions">
            <option value="production" />
            <option value="staging" />
            <option value="development" />
            <option value="test" />
          </datalist>
        </TextField>
        <SelectField label="Expires" value={expiry} onValue={setExpiry}>
          {expiryChoices.map((choice) => (
            <option key={choice.value} value={choice.value}>
              {choice.label}
            </option>
          ))}
        </SelectField>
        {expiry === 'custom' && (
          <TextField
            label="Expiry date (end of the day, your time)"
            type="date"
            required
            min={new Date(Date.now() + 86_400_000).toISOString().slice(0, 10)}
            value={customDate}
            onValue={setCustomDate}
          />
        )}
        <fieldset class="field">
          <legend>Models</legend>
          <label class="radio">
            <input type="radio" name="model-scope" checked={!restrict} onChange={() => setRestrict(false)} />
            Every model of the account ({props.models.length})
          </label>
          <label class="radio">
            <input type="radio" name="model-scope" checked={restrict} onChange={() => setRestrict(true)} />
            Only these models:
          </label>
          {restrict && (
            <div class="checkbox-grid">
              {props.models.map((model) => (
                <label class="checkbox" key={model.id}>
                  <input
                    type="checkbox"
                    checked={chosen.includes(model.id)}
                    onChange={(event) =>
                      setChosen(
                        event.currentTarget.checked
                          ? [...chosen, model.id]
                          : chosen.filter((candidate) => candidate !== model.id),
                      )
                    }
                  />
                  {model.id}
                </label>
              ))}
            </div>
          )}
        </fieldset>
        <ErrorMessage error={error} />
        <div class="dialog-actions">
          <button type="button" class="button" onClick={props.onClose}>
            Cancel
          </button>
          <button type="submit" class="button primary" disabled={busy}>
            Create key
          </button>
        </div>
      </form>
    </Dialog>
  );
}

function RotateKeyDialog(props: {
  accountId: string;
  apiKey: ApiKeyView;
  onClose: () => void;
  onRotated: (key: RotatedKeyView) => void;
}) {
  const { api } = useApp();
  const [grace, setGrace] = useState(86_400);
  const { busy, error, run } = useAction();
  return (
    <Dialog title={`Rotate "${props.apiKey.name}"`} onClose={props.onClose}>
      <form
        onSubmit={async (event) => {
          event.preventDefault();
          await run(async () => {
            props.onRotated(
              await api.post<RotatedKeyView>(`/accounts/${props.accountId}/keys/${props.apiKey.id}/rotate`, {
                gracePeriodSeconds: grace,
              }),
            );
          });
        }}
      >
        <p>
          A new key replaces <code>{props.apiKey.display}</code>, with the same name, environment, models and expiry.
        </p>
        <SelectField
          label="The old key stops working"
          value={grace}
          onValue={(value) => setGrace(Number(value))}
          hint="Give your deployments time to pick up the new key, unless the old one has leaked."
        >
          {graceChoices.map((choice) => (
            <option key={choice.value} value={choice.value}>
              {choice.label}
            </option>
          ))}
        </SelectField>
        <ErrorMessage error={error} />
        <div class="dialog-actions">
          <button type="button" class="button" onClick={props.onClose}>
            Cancel
          </button>
          <button type="submit" class="button primary" disabled={busy}>
            Rotate key
          </button>
        </div>
      </form>
    </Dialog>
  );
}
