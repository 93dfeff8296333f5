import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, runCliJson } from './support/cli.js';
import { apiRequest } from './support/console.js';
import { killStrayServes, type Served, startServe } from './support/serve-process.js';

/** `switchboard users …`: the operator's way to the first admin, invitations and password resets. */

/** One real server for the whole file, on the very file and database the CLI is given: the CLI writes, it reads. */
let server: Served;

beforeAll(async () => {
  server = await startServe({
    config: {
      console: { public_url: 'https://gateway.example.com/' },
      providers: [{ name: 'local', type: 'openai', base_url: 'http://127.0.0.1:9/v1' }],
      models: [{ name: 'small', provider: 'local' }],
    },
  });
  // The account the invitations and memberships below join.
  await server.cli('accounts', 'create', 'acme');
});

afterAll(killStrayServes);

const withConfig = (...args: string[]) => [...args, '--config', server.configFile];

async function canSignIn(email: string, password: string): Promise<number> {
  return (await apiRequest(server.url, 'POST', '/api/session', { body: { email, password } })).status;
}

describe('switchboard users', () => {
  it('creates the first admin with the password read from stdin, who can then sign in', async () => {
    const created = await runCliJson<{ email: string; admin: boolean; id: string }>(
      withConfig('users', 'create', 'Root@Example.com', '--admin'),
      { input: 'the admin password\n' },
    );
    expect(created).toMatchObject({ email: 'root@example.com', admin: true });
    expect(await canSignIn('root@example.com', 'the admin password')).toBe(200);
    expect(await canSignIn('root@example.com', 'another password')).toBe(401);
  });

  it('refuses a short password, a duplicate address and a bad role', async () => {
    const short = await runCli(withConfig('users', 'create', 'x@example.com'), { input: 'short\n' });
    expect(short.code).not.toBe(0);
    expect(short.stderr).toContain('at least 10 characters');
    const duplicate = await runCli(withConfig('users', 'create', 'root@example.com'), {
      input: 'long enough password\n',
    });
    expect(duplicate.stderr).toContain('already exists');
    const role = await runCli(withConfig('users', 'create', 'y@example.com', '--account', 'acme', '--role', 'boss'), {
      input: 'long enough password\n',
    });
    expect(role.stderr).toContain('role must be');
  });

  it('creates an account member, lists users with their accounts', async () => {
    await runCliJson(withConfig('accounts', 'create', 'initech'));
    await runCliJson(withConfig('users', 'create', 'dev@acme.test', '--account', 'initech', '--role', 'member'), {
      input: 'developer password\n',
    });
    const list = await runCliJson<Array<{ email: string; memberships: Array<{ account: string; role: string }> }>>(
      withConfig('users', 'list'),
    );
    expect(list.map((user) => user.email)).toEqual(['dev@acme.test', 'root@example.com']);
    expect(list[0]?.memberships).toEqual([{ account: 'initech', role: 'member' }]);
    const human = await runCli(withConfig('users', 'list'));
    expect(human.stdout).toContain('initech (member)');
    expect(human.stdout).not.toMatch(/scrypt|developer password/);
  });

  it('invites someone with a one-time link on the public URL, which they accept', async () => {
    const invited = await runCliJson<{ link: string; token: string; email: string; role: string }>(
      withConfig('users', 'invite', 'new@acme.test', '--account', 'acme', '--role', 'owner'),
    );
    expect(invited.link).toBe(`https://gateway.example.com/console/invitation#token=${invited.token}`);
    const human = await runCli(withConfig('users', 'invite', 'other@acme.test', '--account', 'acme'));
    expect(human.stdout).toMatch(/https:\/\/gateway\.example\.com\/console\/invitation#token=sbi_/);
    expect(human.stdout).toContain('shown only this once');
    const accepted = await apiRequest(server.url, 'POST', '/api/invitations/accept', {
      body: { token: invited.token, password: 'newcomer password' },
    });
    expect(accepted.status).toBe(200);
    expect(accepted.body.memberships).toEqual([expect.objectContaining({ accountName: 'acme', role: 'owner' })]);
  });

  it('resets a password, disables and re-enables a user, and keeps the last admin', async () => {
    await runCliJson(withConfig('users', 'set-password', 'dev@acme.test'), { input: 'a replaced password\n' });
    expect(await canSignIn('dev@acme.test', 'developer password')).toBe(401);
    expect(await canSignIn('dev@acme.test', 'a replaced password')).toBe(200);
    await runCliJson(withConfig('users', 'disable', 'dev@acme.test'));
    // A disabled user is answered like a wrong password: the answer does not tell a right password from a wrong one.
    expect(await canSignIn('dev@acme.test', 'a replaced password')).toBe(401);
    await runCliJson(withConfig('users', 'enable', 'dev@acme.test'));
    expect(await canSignIn('dev@acme.test', 'a replaced password')).toBe(200);
    const lastAdmin = await runCli(withConfig('users', 'set-admin', 'root@example.com', 'off'));
    expect(lastAdmin.code).not.toBe(0);
    expect(lastAdmin.stderr).toContain('last active admin');
    const promoted = await runCliJson<{ admin: boolean }>(withConfig('users', 'set-admin', 'dev@acme.test', 'on'));
    expect(promoted.admin).toBe(true);
    const membership = await runCliJson<{ role: string }>(
      withConfig('users', 'add-to-account', 'root@example.com', '--account', 'acme', '--role', 'owner'),
    );
    expect(membership.role).toBe('owner');
  });
});

describe('switchboard users rename and delete', () => {
  /** Signs in through the API; the session cookie and a management token made with it. */
  async function signedIn(email: string, password: string) {
    const session = await apiRequest(server.url, 'POST', '/api/session', { body: { email, password } });
    expect(session.status).toBe(200);
    const cookie = `switchboard_session=${/switchboard_session=([^;]+)/.exec(session.headers.get('set-cookie') ?? '')?.[1]}`;
    const token = await apiRequest(server.url, 'POST', '/api/tokens', {
      body: { name: 'script' },
      headers: { cookie, 'x-csrf-token': session.body.csrfToken },
    });
    expect(token.status).toBe(201);
    return {
      sessionStatus: async () => (await apiRequest(server.url, 'GET', '/api/session', { headers: { cookie } })).status,
      tokenStatus: async () =>
        (
          await apiRequest(server.url, 'GET', '/api/session', {
            headers: { authorization: `Bearer ${token.body.token}` },
          })
        ).status,
    };
  }

  it('renames a login, checked as a new address, ending its sessions and tokens', async () => {
    await runCliJson(withConfig('users', 'create', 'Mover@acme.test', '--account', 'acme'), {
      input: 'the mover password\n',
    });
    const before = await signedIn('mover@acme.test', 'the mover password');
    const renamed = await runCliJson<{
      from: string;
      to: string;
      sessionsEnded: number;
      managementTokensRevoked: number;
    }>(withConfig('users', 'rename', 'mover@acme.test', 'Moved@ACME.test'));
    expect(renamed).toMatchObject({ from: 'mover@acme.test', to: 'moved@acme.test', sessionsEnded: 1 });
    expect(renamed.managementTokensRevoked).toBe(1);
    expect(await before.sessionStatus()).toBe(401);
    expect(await before.tokenStatus()).toBe(401);
    expect(await canSignIn('mover@acme.test', 'the mover password')).toBe(401);
    expect(await canSignIn('moved@acme.test', 'the mover password')).toBe(200);
    // The same refusals as a new login's address, said plainly.
    for (const [newEmail, says] of [
      ['root@example.com', 'already exists'],
      ['not an address', 'is not an e-mail address'],
      ['m\u043eved@acme.test', 'mixes the Cyrillic and Latin scripts'],
    ] as const) {
      const refused = await runCli(withConfig('users', 'rename', 'moved@acme.test', newEmail));
      expect(refused.code, newEmail).not.toBe(0);
      expect(refused.stderr).toContain(says);
    }
    const unknown = await runCli(withConfig('users', 'rename', 'nobody@acme.test', 'somebody@acme.test'));
    expect(unknown.stderr).toContain('no user');
  });

  it('deletes a login with its sessions and tokens, never the last admin or the last owner of an account', async () => {
    await runCliJson(withConfig('users', 'create', 'leaver@acme.test', '--account', 'acme'), {
      input: 'the leaver password\n',
    });
    const leaver = await signedIn('leaver@acme.test', 'the leaver password');
    const deleted = await runCliJson<{ email: string; sessionsEnded: number; managementTokensRevoked: number }>(
      withConfig('users', 'delete', 'leaver@acme.test'),
    );
    expect(deleted).toMatchObject({ email: 'leaver@acme.test', sessionsEnded: 1, managementTokensRevoked: 1 });
    expect(await leaver.sessionStatus()).toBe(401);
    expect(await leaver.tokenStatus()).toBe(401);
    expect(await canSignIn('leaver@acme.test', 'the leaver password')).toBe(401);
    const listed = await runCliJson<Array<{ email: string }>>(withConfig('users', 'list'));
    expect(listed.map((user) => user.email)).not.toContain('leaver@acme.test');

    await runCliJson(withConfig('accounts', 'create', 'solo'));
    await runCliJson(withConfig('users', 'create', 'solo@acme.test', '--account', 'solo', '--role', 'owner'), {
      input: 'the solo owner password\n',
    });
    const lastOwner = await runCli(withConfig('users', 'delete', 'solo@acme.test'));
    expect(lastOwner.code).not.toBe(0);
    expect(lastOwner.stderr).toContain('last owner of the account solo');

    // dev@acme.test was made admin above; with it demoted, root is the last active admin.
    await runCliJson(withConfig('users', 'set-admin', 'dev@acme.test', 'off'));
    const lastAdmin = await runCli(withConfig('users', 'delete', 'root@example.com'));
    expect(lastAdmin.code).not.toBe(0);
    expect(lastAdmin.stderr).toContain('last active admin');
    expect(await canSignIn('root@example.com', 'the admin password')).toBe(200);
  });

  it('explains both commands in --help', async () => {
    const rename = await runCli(['users', 'rename', '--help']);
    expect(rename.stdout.replace(/\s+/g, ' ')).toContain('ends their sessions and revokes their management tokens');
    const remove = await runCli(['users', 'delete', '--help']);
    expect(remove.stdout.replace(/\s+/g, ' ')).toContain('refused for the last active admin');
  });
});
