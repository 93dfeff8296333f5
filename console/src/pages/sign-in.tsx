import { useEffect, useState } from 'preact/hooks';
import type { Api } from '../api.js';
import { ErrorMessage } from '../components/common.js';
import { TextField } from '../components/fields.js';
import type { SessionView } from '../types.js';
import { useAction } from '../use-action.js';

export function SignInPage(props: {
  api: Api;
  onSignedIn: (session: SessionView) => Promise<void>;
  /** Why the console could not go on with the session it had (until the next attempt says otherwise). */
  initialError?: unknown;
}) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const { busy, error, run } = useAction();
  useEffect(() => {
    document.title = 'Sign in · Switchboard';
  }, []);
  return (
    <main class="auth-page" id="main">
      <form
        class="auth-card"
        aria-labelledby="sign-in-title"
        onSubmit={async (event) => {
          event.preventDefault();
          await run(async () => {
            const session = await props.api.post<SessionView>('/session', { email, password });
            setPassword('');
            await props.onSignedIn(session);
          });
        }}
      >
        <div class="auth-brand">
          <img src="/console/favicon.svg" alt="" width="32" height="32" />
          <span>Switchboard</span>
        </div>
        <h1 id="sign-in-title">Sign in</h1>
        <TextField
          label="E-mail address"
          type="email"
          name="email"
          autoComplete="username"
          required
          value={email}
          onValue={setEmail}
        />
        <TextField
          label="Password"
          type="password"
          name="password"
          autoComplete="current-password"
          required
          value={password}
          onValue={setPassword}
        />
        <ErrorMessage error={error ?? props.initialError} />
        <button type="submit" class="button primary wide" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
        <p class="muted small">No account yet? Ask your operator or an account owner for an invitation link.</p>
      </form>
    </main>
  );
}
