import { useState } from 'preact/hooks';
import {
  Badge,
  ConfirmDialog,
  ErrorMessage,
  OneTimeSecretDialog,
  PageHeader,
  RelativeTime,
} from '../components/common.js';
import { ActionsHeader, DataTable, RowButton } from '../components/data-table.js';
import { SelectField, TextField } from '../components/fields.js';
import { useApp } from '../context.js';
import type { CreatedManagementTokenView, ManagementTokenView, PasswordChangedView } from '../types.js';
import { useAction } from '../use-action.js';
import { useAsync } from '../use-async.js';

/** The signed-in user's password and management tokens (for scripts calling /api). */
export function SettingsPage() {
  const { session } = useApp();
  // A password change revokes the user's management tokens: the list is loaded again after one.
  const [tokensVersion, setTokensVersion] = useState(0);
  return (
    <>
      <PageHeader title="Settings" description={`Signed in as ${session.user.email}.`} />
      <PasswordForm onChanged={() => setTokensVersion((version) => version + 1)} />
      <Tokens version={tokensVersion} />
    </>
  );
}

function PasswordForm(props: { onChanged: () => void }) {
  const { api } = useApp();
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [repeat, setRepeat] = useState('');
  const { busy, error, setError, run } = useAction();
  const [done, setDone] = useState<string>();
  return (
    <section class="card">
      <h2>Change password</h2>
      <p class="muted">
        Changing it signs out your other sessions and revokes your management tokens: scripts using them need new ones.
      </p>
      <form
        class="stack-form"
        onSubmit={async (event) => {
          event.preventDefault();
          setDone(undefined);
          if (next !== repeat) {
            setError(new Error('The new passwords are not the same.'));
            return;
          }
          await run(async () => {
            const changed = await api.post<PasswordChangedView>('/session/password', {
              currentPassword: current,
              newPassword: next,
            });
            // The change replaced this session: its new cookie is set, and the new CSRF token is this one.
            api.setCsrfToken(changed.csrfToken);
            setCurrent('');
            setNext('');
            setRepeat('');
            setDone(changed.message);
            props.onChanged();
          });
        }}
      >
        <TextField
          label="Current password"
          type="password"
          autoComplete="current-password"
          required
          value={current}
          onValue={setCurrent}
        />
        <TextField
          label="New password (at least 10 characters)"
          type="password"
          autoComplete="new-password"
          required
          minLength={10}
          value={next}
          onValue={setNext}
        />
        <TextField
          label="Repeat the new password"
          type="password"
          autoComplete="new-password"
          required
          value={repeat}
          onValue={setRepeat}
        />
        <ErrorMessage error={error} />
        {done && (
          <p class="success" role="status">
            {done}
          </p>
        )}
        <div>
          <button type="submit" class="button primary" disabled={busy}>
            Change password
          </button>
        </div>
      </form>
    </section>
  );
}

function Tokens(props: { version: number }) {
  const { api, accounts } = useApp();
  const tokens = useAsync(() => api.get<ManagementTokenView[]>('/tokens'), [props.version]);
  const [name, setName] = useState('');
  const [scope, setScope] = useState('');
  const [days, setDays] = useState('90');
  const [created, setCreated] = useState<CreatedManagementTokenView>();
  const [revoking, setRevoking] = useState<ManagementTokenView>();
  const { busy, error, run } = useAction();
  const accountName = (id: string | null) =>
    id === null ? 'All your accounts' : (accounts.find((account) => account.id === id)?.name ?? id);
  return (
    <section class="card">
      <h2>Management tokens</h2>
      <p class="muted">
        For scripts calling the management API (<a href="/api/openapi.json">OpenAPI document</a>): send{' '}
        <code>Authorization: Bearer sbm_…</code>. A token acts as you, optionally for one account only.
      </p>
      <ErrorMessage error={tokens.error ?? error} />
      {(tokens.data?.length ?? 0) > 0 && (
        <DataTable label="Management tokens" stacked={false}>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Token</th>
              <th scope="col">Scope</th>
              <th scope="col">Last used</th>
              <th scope="col">Expires</th>
              <ActionsHeader />
            </tr>
          </thead>
          <tbody>
            {tokens.data?.map((token) => (
              <tr key={token.id}>
                <td>{token.name}</td>
                <td>
                  <code>{token.display}</code>{' '}
                  {token.status !== 'active' && <Badge tone="neutral">{token.status}</Badge>}
                </td>
                <td>{accountName(token.accountId)}</td>
                <td>
                  <RelativeTime iso={token.lastUsedAt} />
                </td>
                <td>
                  <RelativeTime iso={token.expiresAt} never="Never" />
                </td>
                <td class="actions">
                  {token.status === 'active' && (
                    <RowButton label={`Revoke ${token.name}`} danger onClick={() => setRevoking(token)}>
                      Revoke
                    </RowButton>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </DataTable>
      )}
      <form
        class="inline-form"
        onSubmit={async (event) => {
          event.preventDefault();
          await run(async () => {
            setCreated(
              await api.post<CreatedManagementTokenView>('/tokens', {
                name: name.trim(),
                accountId: scope || undefined,
                expiresInDays: days === 'never' ? undefined : Number(days),
              }),
            );
            setName('');
            tokens.reload();
          });
        }}
      >
        <TextField label="Name" required maxLength={100} value={name} onValue={setName} />
        <SelectField label="Scope" value={scope} onValue={setScope}>
          <option value="">All your accounts</option>
          {accounts.map((account) => (
            <option key={account.id} value={account.id}>
              {account.name} only
            </option>
          ))}
        </SelectField>
        <SelectField label="Expires" value={days} onValue={setDays}>
          <option value="30">In 30 days</option>
          <option value="90">In 90 days</option>
          <option value="365">In 1 year</option>
          <option value="never">Never</option>
        </SelectField>
        <button type="submit" class="button primary" disabled={busy}>
          Create token
        </button>
      </form>
      {created && (
        <OneTimeSecretDialog
          title="Management token created"
          label={created.name}
          value={created.token}
          warning="This is the only time the token is shown. Store it where your script reads its secrets."
          doneLabel="I have stored the token"
          onClose={() => setCreated(undefined)}
        />
      )}
      {revoking && (
        <ConfirmDialog
          title={`Revoke "${revoking.name}"?`}
          confirmLabel="Revoke token"
          onClose={() => setRevoking(undefined)}
          onConfirm={async () => {
            await api.delete(`/tokens/${revoking.id}`);
            setRevoking(undefined);
            tokens.reload();
          }}
        >
          <p>Scripts using it are refused from their next request.</p>
        </ConfirmDialog>
      )}
    </section>
  );
}
