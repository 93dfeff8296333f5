import { useEffect, useState } from 'preact/hooks';
import type { Api } from '../api.js';
import { ErrorMessage, Loading } from '../components/common.js';
import { navigate } from '../router.js';
import type { InvitationPreviewView, SessionView } from '../types.js';

/**
 * Accepting an invitation. The link carries the token in the URL fragment (#token=…), which browsers never send to
 * a server; it is read once and removed from the address bar and history.
 */
export function InvitationPage(props: { api: Api; onSignedIn: (session: SessionView) => Promise<void> }) {
  const [token] = useState(() => new URLSearchParams(window.location.hash.slice(1)).get('token') ?? '');
  const [preview, setPreview] = useState<InvitationPreviewView>();
  const [loadError, setLoadError] = useState<unknown>();
  const [password, setPassword] = useState('');
  const [confirmation, setConfirmation] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();

  useEffect(() => {
    document.title = 'Accept invitation · Switchboard';
    window.history.replaceState(null, '', window.location.pathname);
    if (!token) {
      setLoadError(new Error('This link has no invitation token. Open the full link you were sent.'));
      return;
    }
    props.api.post<InvitationPreviewView>('/invitations/preview', { token }).then(setPreview, setLoadError);
  }, [props.api, token]);

  return (
    <main class="auth-page" id="main">
      <div class="auth-card">
        <div class="auth-brand">
          <img src="/console/favicon.svg" alt="" width="32" height="32" />
          <span>Switchboard</span>
        </div>
        <h1>Accept invitation</h1>
        {loadError ? (
          <ErrorMessage error={loadError} />
        ) : !preview ? (
          <Loading />
        ) : (
          <form
            onSubmit={async (event) => {
              event.preventDefault();
              setError(undefined);
              if (!preview.existingUser && password !== confirmation) {
                setError(new Error('The two passwords are not the same.'));
                return;
              }
              setBusy(true);
              try {
                const session = await props.api.post<SessionView>('/invitations/accept', { token, password });
                await props.onSignedIn(session);
                navigate('/', { replace: true });
              } catch (failure) {
                setError(failure);
                setBusy(false);
              }
            }}
          >
            <p>
              You are invited to join <strong>{preview.accountName}</strong> as <strong>{preview.role}</strong>, as{' '}
              <strong>{preview.email}</strong>.
            </p>
            <label class="field">
              <span>{preview.existingUser ? 'Your password' : 'Choose a password (at least 10 characters)'}</span>
              <input
                type="password"
                autoComplete={preview.existingUser ? 'current-password' : 'new-password'}
                required
                minLength={preview.existingUser ? 1 : 10}
                value={password}
                onInput={(event) => setPassword(event.currentTarget.value)}
              />
            </label>
            {!preview.existingUser && (
              <label class="field">
                <span>Repeat the password</span>
                <input
                  type="password"
                  autoComplete="new-password"
                  required
                  value={confirmation}
                  onInput={(event) => setConfirmation(event.currentTarget.value)}
                />
              </label>
            )}
            <ErrorMessage error={error} />
            <button type="submit" class="button primary wide" disabled={busy}>
              Join {preview.accountName}
            </button>
          </form>
        )}
      </div>
    </main>
  );
}
