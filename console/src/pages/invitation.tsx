import type { JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import type { Api } from '../api.js';
import { ErrorMessage, Loading } from '../components/common.js';
import { TextField } from '../components/fields.js';
import { navigate } from '../router.js';
import type { InvitationPreviewView, SessionView } from '../types.js';

/**
 * Accepting an invitation. The link carries the token in the URL fragment (#token=…), which browsers never send to
 * a server; it is read once and removed from the address bar and history. Signed in as the invited address, one
 * click joins; signed out, the page offers both ways (a new login, or the password of an existing one) without
 * knowing which applies: the server does not say whether an address has a login.
 */
export function InvitationPage(props: {
  api: Api;
  session: SessionView | undefined;
  onSignedIn: (session: SessionView) => Promise<void>;
  onSignOut: () => Promise<void>;
}) {
  const [token] = useState(() => new URLSearchParams(window.location.hash.slice(1)).get('token') ?? '');
  const [preview, setPreview] = useState<InvitationPreviewView>();
  const [loadError, setLoadError] = useState<unknown>();
  const [mode, setMode] = useState<'new' | 'existing'>('new');
  const [password, setPassword] = useState('');
  const [confirmation, setConfirmation] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const signedInAs = props.session?.user.email;

  useEffect(() => {
    document.title = 'Accept invitation · Switchboard';
    window.history.replaceState(null, '', window.location.pathname);
  }, []);

  useEffect(() => {
    if (!token) {
      setLoadError(new Error('This link has no invitation token. Open the full link you were sent.'));
      return;
    }
    props.api.post<InvitationPreviewView>('/invitations/preview', { token }).then(setPreview, setLoadError);
  }, [props.api, token, signedInAs]);

  const accept = async (body: { token: string; password?: string }) => {
    setBusy(true);
    try {
      const session = await props.api.post<SessionView>('/invitations/accept', body);
      await props.onSignedIn(session);
      navigate('/', { replace: true });
    } catch (failure) {
      setError(failure);
      setBusy(false);
    }
  };

  let content: JSX.Element;
  if (loadError) content = <ErrorMessage error={loadError} />;
  else if (!preview) content = <Loading />;
  else if (signedInAs !== undefined && preview.signedInAsInvitee) {
    content = (
      <>
        <Invited preview={preview} />
        <ErrorMessage error={error} />
        <button type="button" class="button primary wide" disabled={busy} onClick={() => accept({ token })}>
          Join {preview.accountName}
        </button>
      </>
    );
  } else if (signedInAs !== undefined) {
    content = (
      <>
        <Invited preview={preview} />
        <p>
          You are signed in as <strong>{signedInAs}</strong>. Sign out to accept this invitation as{' '}
          <strong>{preview.email}</strong>.
        </p>
        <button type="button" class="button wide" onClick={() => props.onSignOut()}>
          Sign out
        </button>
      </>
    );
  } else {
    content = (
      <form
        onSubmit={async (event) => {
          event.preventDefault();
          setError(undefined);
          if (mode === 'new' && password !== confirmation) {
            setError(new Error('The two passwords are not the same.'));
            return;
          }
          await accept({ token, password });
        }}
      >
        <Invited preview={preview} />
        <fieldset class="field">
          <legend>Your login</legend>
          <label class="radio">
            <input type="radio" name="mode" checked={mode === 'new'} onChange={() => setMode('new')} />I am new here
          </label>
          <label class="radio">
            <input type="radio" name="mode" checked={mode === 'existing'} onChange={() => setMode('existing')} />I
            already have a login with this address
          </label>
        </fieldset>
        <TextField
          label={mode === 'existing' ? 'Your password' : 'Choose a password (at least 10 characters)'}
          type="password"
          autoComplete={mode === 'existing' ? 'current-password' : 'new-password'}
          required
          minLength={mode === 'existing' ? 1 : 10}
          value={password}
          onValue={setPassword}
        />
        {mode === 'new' && (
          <TextField
            label="Repeat the password"
            type="password"
            autoComplete="new-password"
            required
            value={confirmation}
            onValue={setConfirmation}
          />
        )}
        <ErrorMessage error={error} />
        <button type="submit" class="button primary wide" disabled={busy}>
          Join {preview.accountName}
        </button>
      </form>
    );
  }

  return (
    <main class="auth-page" id="main">
      <div class="auth-card">
        <div class="auth-brand">
          <img src="/console/favicon.svg" alt="" width="32" height="32" />
          <span>Switchboard</span>
        </div>
        <h1>Accept invitation</h1>
        {content}
      </div>
    </main>
  );
}

function Invited(props: { preview: InvitationPreviewView }) {
  return (
    <p>
      You are invited to join <strong>{props.preview.accountName}</strong> as <strong>{props.preview.role}</strong>, as{' '}
      <strong>{props.preview.email}</strong>.
    </p>
  );
}
