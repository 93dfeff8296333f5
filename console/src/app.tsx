import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useMemo, useState } from 'preact/hooks';
import { ApiFailure, createApi } from './api.js';
import { Link, Loading } from './components/common.js';
import { AppContext, type AppState, useApp } from './context.js';
import { AdminAccountsPage } from './pages/admin-accounts.js';
import { AdminUsersPage } from './pages/admin-users.js';
import { InvitationPage } from './pages/invitation.js';
import { KeysPage } from './pages/keys.js';
import { LimitsPage } from './pages/limits.js';
import { LogDetailPage } from './pages/log-detail.js';
import { LogsPage } from './pages/logs.js';
import { MembersPage } from './pages/members.js';
import { ModelsPage } from './pages/models.js';
import { SettingsPage } from './pages/settings.js';
import { SignInPage } from './pages/sign-in.js';
import { UsagePage } from './pages/usage.js';
import { match, navigate, useLocation } from './router.js';
import type { AccountView, SessionView } from './types.js';

type Phase =
  | { name: 'loading' }
  /** error: why the stored session could not be used, when the reason is not simply that there is none. */
  | { name: 'signed-out'; error?: unknown }
  | { name: 'signed-in'; session: SessionView; accounts: AccountView[] };

export function App() {
  const location = useLocation();
  const [phase, setPhase] = useState<Phase>({ name: 'loading' });
  const [lastAccountId, setLastAccountId] = useState<string>();
  const api = useMemo(() => createApi(() => setPhase({ name: 'signed-out' })), []);

  const enter = useCallback(
    async (session: SessionView) => {
      api.setCsrfToken(session.csrfToken);
      const accounts = await api.get<AccountView[]>('/accounts');
      setPhase({ name: 'signed-in', session, accounts });
    },
    [api],
  );

  useEffect(() => {
    // Any failure here (no session, the server unreachable, the accounts unreadable) leads to the sign-in page, which
    // says why unless there simply was no session: never an endless "Loading".
    api
      .get<SessionView>('/session')
      .then(enter)
      .catch((error: unknown) =>
        setPhase({
          name: 'signed-out',
          error: error instanceof ApiFailure && error.code === 'not_signed_in' ? undefined : error,
        }),
      );
  }, [api, enter]);

  if (phase.name === 'loading') return <Loading label="Loading the console…" />;
  if (location.path === '/invitation') {
    return (
      <InvitationPage
        api={api}
        session={phase.name === 'signed-in' ? phase.session : undefined}
        onSignedIn={enter}
        onSignOut={async () => {
          try {
            await api.delete('/session');
          } finally {
            api.setCsrfToken(undefined);
            setPhase({ name: 'signed-out' });
          }
        }}
      />
    );
  }
  if (phase.name === 'signed-out') {
    return (
      <SignInPage
        api={api}
        initialError={phase.error}
        onSignedIn={async (session) => {
          await enter(session);
          if (location.path === '/sign-in') navigate('/', { replace: true });
        }}
      />
    );
  }

  const state: AppState = {
    api,
    session: phase.session,
    accounts: phase.accounts,
    lastAccountId,
    setLastAccountId,
    reloadAccounts: async () => {
      const accounts = await api.get<AccountView[]>('/accounts');
      setPhase((previous) => (previous.name === 'signed-in' ? { ...previous, accounts } : previous));
    },
    signOut: async () => {
      try {
        await api.delete('/session');
      } finally {
        api.setCsrfToken(undefined);
        setPhase({ name: 'signed-out' });
        navigate('/sign-in', { replace: true });
      }
    },
  };
  return (
    <AppContext.Provider value={state}>
      <Routes />
    </AppContext.Provider>
  );
}

function Routes() {
  const { path, query } = useLocation();
  const { session, accounts } = useApp();
  const accountRoute = (pattern: string) => match(pattern, path);

  let params = accountRoute('/accounts/:accountId/keys');
  if (params)
    return (
      <AccountShell accountId={params.accountId ?? ''} section="keys">
        <KeysPage accountId={params.accountId ?? ''} />
      </AccountShell>
    );
  params = accountRoute('/accounts/:accountId/logs');
  if (params)
    return (
      <AccountShell accountId={params.accountId ?? ''} section="logs">
        <LogsPage accountId={params.accountId ?? ''} query={query} />
      </AccountShell>
    );
  params = accountRoute('/accounts/:accountId/logs/:requestId');
  if (params)
    return (
      <AccountShell accountId={params.accountId ?? ''} section="logs">
        <LogDetailPage accountId={params.accountId ?? ''} requestId={params.requestId ?? ''} />
      </AccountShell>
    );
  params = accountRoute('/accounts/:accountId/usage');
  if (params)
    return (
      <AccountShell accountId={params.accountId ?? ''} section="usage">
        <UsagePage accountId={params.accountId ?? ''} query={query} />
      </AccountShell>
    );
  params = accountRoute('/accounts/:accountId/limits');
  if (params)
    return (
      <AccountShell accountId={params.accountId ?? ''} section="limits">
        <LimitsPage accountId={params.accountId ?? ''} />
      </AccountShell>
    );
  params = accountRoute('/accounts/:accountId/models');
  if (params)
    return (
      <AccountShell accountId={params.accountId ?? ''} section="models">
        <ModelsPage accountId={params.accountId ?? ''} />
      </AccountShell>
    );
  params = accountRoute('/accounts/:accountId/members');
  if (params)
    return (
      <AccountShell accountId={params.accountId ?? ''} section="members">
        <MembersPage accountId={params.accountId ?? ''} />
      </AccountShell>
    );
  if (path === '/settings')
    return (
      <Shell section="settings">
        <SettingsPage />
      </Shell>
    );
  if (session.user.admin) {
    if (path === '/admin/accounts')
      return (
        <Shell section="admin-accounts">
          <AdminAccountsPage />
        </Shell>
      );
    if (path === '/admin/users')
      return (
        <Shell section="admin-users">
          <AdminUsersPage />
        </Shell>
      );
    if (path === '/admin/usage')
      return (
        <Shell section="admin-usage">
          <UsagePage query={query} />
        </Shell>
      );
    if (path === '/admin/logs')
      return (
        <Shell section="admin-logs">
          <LogsPage query={query} />
        </Shell>
      );
    params = match('/admin/logs/:requestId', path);
    if (params)
      return (
        <Shell section="admin-logs">
          <LogDetailPage requestId={params.requestId ?? ''} />
        </Shell>
      );
  }
  if (path === '/' || path === '/sign-in') {
    const first = accounts[0];
    return (
      <Redirect to={first ? `/accounts/${first.id}/keys` : session.user.admin ? '/admin/accounts' : '/settings'} />
    );
  }
  return (
    <Shell section="none">
      <h1>Page not found</h1>
      <p>
        There is nothing at this address. <Link href="/">Go to the start page</Link>.
      </p>
    </Shell>
  );
}

function Redirect(props: { to: string }) {
  useEffect(() => navigate(props.to, { replace: true }), [props.to]);
  return null;
}

type Section =
  | 'keys'
  | 'logs'
  | 'usage'
  | 'limits'
  | 'models'
  | 'members'
  | 'settings'
  | 'admin-accounts'
  | 'admin-users'
  | 'admin-logs'
  | 'admin-usage'
  | 'none';

function AccountShell(props: { accountId: string; section: Section; children: ComponentChildren }) {
  const { accounts, setLastAccountId } = useApp();
  const account = accounts.find((candidate) => candidate.id === props.accountId);
  useEffect(() => {
    if (account) setLastAccountId(account.id);
  }, [account, setLastAccountId]);
  if (!account) {
    return (
      <Shell section="none">
        <h1>Account not found</h1>
        <p>
          This account does not exist, or you are not a member of it. <Link href="/">Go to the start page</Link>.
        </p>
      </Shell>
    );
  }
  return (
    <Shell section={props.section} account={account}>
      {props.children}
    </Shell>
  );
}

function Shell(props: { section: Section; account?: AccountView; children: ComponentChildren }) {
  const { session, accounts, signOut, lastAccountId } = useApp();
  const { account, section } = props;
  const [menuOpen, setMenuOpen] = useState(false);
  const { path } = useLocation();
  useEffect(() => setMenuOpen(false), [path]);
  const current = (name: Section) => (section === name ? ('page' as const) : undefined);
  // Outside an account's pages, the switcher and the sidebar both show the account last opened.
  const selectedAccount = account ?? accounts.find((candidate) => candidate.id === lastAccountId) ?? accounts[0];
  return (
    <div class="shell">
      <a class="skip-link" href="#main">
        Skip to content
      </a>
      <header class="topbar">
        <Link href="/" class="brand">
          <img src="/console/favicon.svg" alt="" width="24" height="24" />
          <span>Switchboard</span>
        </Link>
        {accounts.length > 0 && (
          <label class="account-switcher">
            <span class="visually-hidden">Account</span>
            <select
              value={selectedAccount?.id ?? ''}
              onChange={(event) => {
                const id = event.currentTarget.value;
                const keep = ['keys', 'logs', 'usage', 'limits', 'models', 'members'].includes(section)
                  ? section
                  : 'keys';
                if (id) navigate(`/accounts/${id}/${keep}`);
              }}
            >
              {accounts.map((candidate) => (
                <option key={candidate.id} value={candidate.id}>
                  {candidate.name}
                  {candidate.disabled ? ' (disabled)' : ''}
                </option>
              ))}
            </select>
          </label>
        )}
        <button
          type="button"
          class="menu-toggle"
          aria-expanded={menuOpen}
          aria-controls="navigation"
          onClick={() => setMenuOpen(!menuOpen)}
        >
          Menu
        </button>
        <div class="user">
          <span class="user-email" title={session.user.email}>
            {session.user.email}
          </span>
          <button type="button" class="button small" onClick={() => void signOut()}>
            Sign out
          </button>
        </div>
      </header>
      <div class="layout">
        <nav id="navigation" class={menuOpen ? 'sidebar open' : 'sidebar'} aria-label="Console">
          {selectedAccount && (
            <>
              <p class="nav-heading">{selectedAccount.name}</p>
              <ul>
                <li>
                  <Link href={`/accounts/${selectedAccount.id}/keys`} aria-current={current('keys')}>
                    API keys
                  </Link>
                </li>
                <li>
                  <Link href={`/accounts/${selectedAccount.id}/logs`} aria-current={current('logs')}>
                    Request log
                  </Link>
                </li>
                <li>
                  <Link href={`/accounts/${selectedAccount.id}/usage`} aria-current={current('usage')}>
                    Usage
                  </Link>
                </li>
                <li>
                  <Link href={`/accounts/${selectedAccount.id}/limits`} aria-current={current('limits')}>
                    Limits and budgets
                  </Link>
                </li>
                <li>
                  <Link href={`/accounts/${selectedAccount.id}/models`} aria-current={current('models')}>
                    Models
                  </Link>
                </li>
                <li>
                  <Link href={`/accounts/${selectedAccount.id}/members`} aria-current={current('members')}>
                    Members
                  </Link>
                </li>
              </ul>
            </>
          )}
          <p class="nav-heading">You</p>
          <ul>
            <li>
              <Link href="/settings" aria-current={current('settings')}>
                Settings and tokens
              </Link>
            </li>
          </ul>
          {session.user.admin && (
            <>
              <p class="nav-heading">Operator</p>
              <ul>
                <li>
                  <Link href="/admin/accounts" aria-current={current('admin-accounts')}>
                    All accounts
                  </Link>
                </li>
                <li>
                  <Link href="/admin/users" aria-current={current('admin-users')}>
                    Users
                  </Link>
                </li>
                <li>
                  <Link href="/admin/usage" aria-current={current('admin-usage')}>
                    Usage, all accounts
                  </Link>
                </li>
                <li>
                  <Link href="/admin/logs" aria-current={current('admin-logs')}>
                    Log, all accounts
                  </Link>
                </li>
              </ul>
            </>
          )}
        </nav>
        <main id="main" tabIndex={-1}>
          {account?.disabled && (
            <p class="banner" role="status">
              This account is disabled: the operator has stopped all of its keys, and no key can be created or rotated
              until it is enabled again.
            </p>
          )}
          {props.children}
        </main>
      </div>
    </div>
  );
}
