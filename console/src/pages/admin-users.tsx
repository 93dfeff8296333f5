import { useState } from 'preact/hooks';
import { ApiFailure } from '../api.js';
import { Badge, ConfirmDialog, ErrorMessage, Link, Loaded, PageHeader, RelativeTime } from '../components/common.js';
import { ActionsHeader, DataTable } from '../components/data-table.js';
import { TextField } from '../components/fields.js';
import { useApp } from '../context.js';
import type { UserWithMemberships } from '../types.js';
import { useAction } from '../use-action.js';
import { useAsync } from '../use-async.js';

/** Operator: every user, their accounts and roles; create users, make admins, disable. */
export function AdminUsersPage() {
  const { api, session } = useApp();
  const users = useAsync(() => api.get<UserWithMemberships[]>('/users'), []);
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [admin, setAdmin] = useState(false);
  const { busy, error, setError, run } = useAction();

  const [unconfirmed, setUnconfirmed] = useState<{ user: UserWithMemberships; message: string }>();
  const [disabling, setDisabling] = useState<UserWithMemberships>();

  const update = async (
    user: UserWithMemberships,
    changes: { admin?: boolean; disabled?: boolean; confirmInvitedLogin?: boolean },
  ) => {
    setError(undefined);
    try {
      await api.patch(`/users/${user.id}`, changes);
      users.reload();
    } catch (failure) {
      // A login an account owner's invitation created: the server says who made it, the operator decides.
      if (failure instanceof ApiFailure && failure.code === 'login_created_by_invitation') {
        setUnconfirmed({ user, message: failure.message });
      } else setError(failure);
    }
  };

  return (
    <>
      <PageHeader
        title="Users"
        description="People who sign in to this console. To give someone access to an account, invite them from the account's Members page."
      />
      <ErrorMessage error={users.error ?? error} />
      {unconfirmed && (
        <ConfirmDialog
          title={`Make ${unconfirmed.user.email} an admin?`}
          confirmLabel="Make admin"
          onClose={() => setUnconfirmed(undefined)}
          onConfirm={async () => {
            await api.patch(`/users/${unconfirmed.user.id}`, { admin: true, confirmInvitedLogin: true });
            setUnconfirmed(undefined);
            users.reload();
          }}
        >
          <p>{unconfirmed.message}</p>
        </ConfirmDialog>
      )}
      {disabling && (
        <ConfirmDialog
          title={`Disable ${disabling.email}?`}
          confirmLabel="Disable user"
          onClose={() => setDisabling(undefined)}
          onConfirm={async () => {
            await api.patch(`/users/${disabling.id}`, { disabled: true });
            setDisabling(undefined);
            users.reload();
          }}
        >
          <p>
            They are signed out everywhere and their management tokens are revoked. Enabling them again revives neither:
            they sign in anew and make new tokens.
          </p>
        </ConfirmDialog>
      )}
      <Loaded state={users}>
        {(list) => (
          <DataTable label="Users">
            <thead>
              <tr>
                <th scope="col">E-mail address</th>
                <th scope="col">Accounts</th>
                <th scope="col" class="hide-narrow">
                  Last sign-in
                </th>
                <ActionsHeader />
              </tr>
            </thead>
            <tbody>
              {list.map((user) => (
                <tr key={user.id}>
                  <td class="wrap-anywhere">
                    {user.email} {user.admin && <Badge tone="info">admin</Badge>}{' '}
                    {user.disabled && <Badge tone="bad">disabled</Badge>}
                    {!user.hasPassword && <Badge tone="neutral">invited</Badge>}
                    {user.createdByInvitation && <Badge tone="warn">created by an owner's invitation</Badge>}
                  </td>
                  <td data-label="Accounts">
                    <span>
                      {user.memberships.length === 0 ? (
                        <span class="muted">none</span>
                      ) : (
                        user.memberships.map((membership, index) => (
                          <span key={membership.accountId}>
                            {index > 0 && ', '}
                            <Link href={`/accounts/${membership.accountId}/members`}>{membership.accountName}</Link>{' '}
                            <span class="muted small">({membership.role})</span>
                          </span>
                        ))
                      )}
                    </span>
                  </td>
                  <td class="hide-narrow" data-label="Last sign-in">
                    <RelativeTime iso={user.lastSignInAt} />
                  </td>
                  <td class="actions">
                    {user.id !== session.user.id && (
                      <>
                        <button type="button" class="button small" onClick={() => update(user, { admin: !user.admin })}>
                          {user.admin ? 'Remove admin' : 'Make admin'}
                        </button>
                        <button
                          type="button"
                          class="button small danger-outline"
                          onClick={() => (user.disabled ? update(user, { disabled: false }) : setDisabling(user))}
                        >
                          {user.disabled ? 'Enable' : 'Disable'}
                        </button>
                      </>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </DataTable>
        )}
      </Loaded>
      <section class="card">
        <h2>Create a user</h2>
        <form
          class="inline-form"
          onSubmit={async (event) => {
            event.preventDefault();
            await run(async () => {
              await api.post('/users', { email, password, admin });
              setEmail('');
              setPassword('');
              setAdmin(false);
              users.reload();
            });
          }}
        >
          <TextField label="E-mail address" type="email" required value={email} onValue={setEmail} />
          <TextField
            label="Initial password"
            type="password"
            autoComplete="new-password"
            required
            minLength={10}
            value={password}
            onValue={setPassword}
          />
          <label class="checkbox">
            <input type="checkbox" checked={admin} onChange={(event) => setAdmin(event.currentTarget.checked)} />
            Admin (operator)
          </label>
          <button type="submit" class="button primary" disabled={busy}>
            Create user
          </button>
        </form>
      </section>
    </>
  );
}
