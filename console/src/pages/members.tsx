import { useState } from 'preact/hooks';
import {
  Badge,
  ConfirmDialog,
  ErrorMessage,
  Loaded,
  OneTimeSecretDialog,
  PageHeader,
  RelativeTime,
} from '../components/common.js';
import { ActionsHeader, DataTable, RowButton } from '../components/data-table.js';
import { SelectField, TextField } from '../components/fields.js';
import { useApp } from '../context.js';
import type { CreatedInvitationView, InvitationView, MemberView } from '../types.js';
import { useAction } from '../use-action.js';
import { useAsync } from '../use-async.js';

/** The account's people. Owners (and admins) invite by link, change roles and remove members. */
export function MembersPage(props: { accountId: string }) {
  const { api, accounts, session } = useApp();
  const account = accounts.find((candidate) => candidate.id === props.accountId);
  const canManage = session.user.admin || account?.role === 'owner';
  const members = useAsync(() => api.get<MemberView[]>(`/accounts/${props.accountId}/members`), [props.accountId]);
  const invitations = useAsync(
    () => (canManage ? api.get<InvitationView[]>(`/accounts/${props.accountId}/invitations`) : Promise.resolve([])),
    [props.accountId, canManage],
  );
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<'member' | 'owner'>('member');
  const [created, setCreated] = useState<CreatedInvitationView>();
  const [removing, setRemoving] = useState<MemberView>();
  const { busy, error, setError, run } = useAction();

  return (
    <>
      <PageHeader
        title="Members"
        description="Owners manage members and invitations; every member can manage keys and read the log and usage."
      />
      <ErrorMessage error={members.error ?? error} />
      <Loaded state={members}>
        {(list) => (
          <DataTable label="Members">
            <thead>
              <tr>
                <th scope="col">E-mail address</th>
                <th scope="col">Role</th>
                <th scope="col">Last sign-in</th>
                {canManage && <ActionsHeader />}
              </tr>
            </thead>
            <tbody>
              {list.map((member) => (
                <tr key={member.userId}>
                  <td class="wrap-anywhere">
                    {member.email} {member.disabled && <Badge tone="bad">disabled</Badge>}
                  </td>
                  <td data-label="Role">
                    {canManage ? (
                      <select
                        aria-label={`Role of ${member.email}`}
                        value={member.role}
                        onChange={async (event) => {
                          setError(undefined);
                          try {
                            await api.patch(`/accounts/${props.accountId}/members/${member.userId}`, {
                              role: event.currentTarget.value,
                            });
                          } catch (failure) {
                            setError(failure);
                          }
                          members.reload();
                        }}
                      >
                        <option value="owner">Owner</option>
                        <option value="member">Member</option>
                      </select>
                    ) : (
                      member.role
                    )}
                  </td>
                  <td data-label="Last sign-in">
                    <RelativeTime iso={member.lastSignInAt} />
                  </td>
                  {canManage && (
                    <td class="actions">
                      <RowButton label={`Remove ${member.email}`} danger onClick={() => setRemoving(member)}>
                        Remove
                      </RowButton>
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </DataTable>
        )}
      </Loaded>
      {canManage && (
        <>
          <section class="card">
            <h2>Invite someone</h2>
            <form
              class="inline-form"
              onSubmit={async (event) => {
                event.preventDefault();
                await run(async () => {
                  setCreated(
                    await api.post<CreatedInvitationView>(`/accounts/${props.accountId}/invitations`, { email, role }),
                  );
                  setEmail('');
                  invitations.reload();
                });
              }}
            >
              <TextField label="E-mail address" type="email" required value={email} onValue={setEmail} />
              <SelectField label="Role" value={role} onValue={(value) => setRole(value as 'member' | 'owner')}>
                <option value="member">Member</option>
                <option value="owner">Owner</option>
              </SelectField>
              <button type="submit" class="button primary" disabled={busy}>
                Create invitation link
              </button>
            </form>
          </section>
          {(invitations.data?.length ?? 0) > 0 && (
            <section class="card">
              <h2>Open invitations</h2>
              <ul class="plain-list">
                {invitations.data?.map((invitation) => (
                  <li key={invitation.id}>
                    {invitation.email} as {invitation.role}, expires <RelativeTime iso={invitation.expiresAt} />{' '}
                    <button
                      type="button"
                      class="button small ghost"
                      onClick={async () => {
                        await api.delete(`/accounts/${props.accountId}/invitations/${invitation.id}`);
                        invitations.reload();
                      }}
                    >
                      Revoke
                    </button>
                  </li>
                ))}
              </ul>
            </section>
          )}
        </>
      )}
      {created && (
        <OneTimeSecretDialog
          title="Invitation created"
          label={`Link for ${created.email}`}
          value={`${window.location.origin}${created.path}`}
          warning="Send this link to the person; it is shown only now, works once, and expires. Switchboard sends no e-mail."
          doneLabel="Done"
          onClose={() => setCreated(undefined)}
        />
      )}
      {removing && (
        <ConfirmDialog
          title={`Remove ${removing.email}?`}
          confirmLabel="Remove member"
          onClose={() => setRemoving(undefined)}
          onConfirm={async () => {
            await api.delete(`/accounts/${props.accountId}/members/${removing.userId}`);
            setRemoving(undefined);
            members.reload();
          }}
        >
          <p>They lose access to this account's keys, log and usage at once. Keys they created keep working.</p>
        </ConfirmDialog>
      )}
    </>
  );
}
