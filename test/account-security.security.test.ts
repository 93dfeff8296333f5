import { createHash, generateKeyPairSync, sign } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { findUserByEmail } from '../src/db/repositories/users.js';
import { generateKey } from '../src/keys/format.js';
import { createKey, revokeKey } from '../src/keys/service.js';
import { listInvitations } from '../src/users/invitations.js';
import { runCli, runCliJson } from './support/cli.js';
import {
  type ApiClient,
  accountId,
  anonymousClient,
  createTestUser,
  signIn,
  testPassword,
  tokenClient,
} from './support/console.js';
import { jsonOf, startTestGateway, type TestGateway } from './support/gateway.js';
import { type MockUpstream, startMockUpstream } from './support/mock-openai-upstream.js';
import { type MockServer, startMockServer } from './support/mock-server.js';

/**
 * The account-security findings of issue 27, one regression test each: what an invitation's inviter can make of the
 * login it creates, tokens outliving a password, limits a member could lift, keys revocable only by id, and GitHub's
 * secret-scanning reports. Sign-in throttling and a disabled user's answer are in manage-api.security.test.ts,
 * the HTTP hardening in http-hardening.security.test.ts.
 */

let mock: MockUpstream;
let keyServer: MockServer;
let gateway: TestGateway;
let acme: string;
let globex: string;
let admin: ApiClient;
let ownerA: ApiClient;
let ownerAId: string;
let memberA: ApiClient;
let ownerB: ApiClient;

/** The key pair standing in for GitHub's secret-scanning signing key. */
const github = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
const githubKeyId = 'test-key-1';

const cli = (...args: string[]) => [...args, '--data-dir', gateway.dataDir];

beforeAll(async () => {
  mock = await startMockUpstream();
  // Serves the verification keys the way https://api.github.com/meta/public_keys/secret_scanning does.
  keyServer = await startMockServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(
      JSON.stringify({
        public_keys: [
          {
            key_identifier: githubKeyId,
            key: github.publicKey.export({ type: 'spki', format: 'pem' }),
            is_current: true,
          },
        ],
      }),
    );
  });
  gateway = await startTestGateway({
    mock,
    config: {
      limits: { key_defaults: { daily_budget_usd: 100 } },
      secret_scanning: { enabled: true, public_keys_url: `${keyServer.url}/meta/public_keys/secret_scanning` },
    },
  });
  acme = await accountId(gateway, 'acme');
  await createTestUser(gateway, { email: 'root@operator.test', admin: true });
  admin = await signIn(gateway, 'root@operator.test');
  globex = (await admin.request('POST', '/api/accounts', { name: 'globex' })).body.id;
  ownerAId = (await createTestUser(gateway, { email: 'owner@acme.test', account: 'acme', role: 'owner' })).id;
  await createTestUser(gateway, { email: 'member@acme.test', account: 'acme', role: 'member' });
  await createTestUser(gateway, { email: 'owner@globex.test', account: 'globex', role: 'owner' });
  ownerA = await signIn(gateway, 'owner@acme.test');
  memberA = await signIn(gateway, 'member@acme.test');
  ownerB = await signIn(gateway, 'owner@globex.test');
});

afterAll(async () => {
  await gateway?.close();
  await keyServer?.close();
  await mock?.close();
});

async function invite(by: ApiClient, account: string, email: string, role = 'member'): Promise<string> {
  const response = await by.request('POST', `/api/accounts/${account}/invitations`, { email, role });
  expect(response.status).toBe(201);
  return response.body.token;
}

async function userNamed(email: string) {
  const users = (await admin.request('GET', '/api/users')).body as Array<{ email: string; id: string }>;
  const user = users.find((candidate) => candidate.email === email);
  if (!user) throw new Error(`no user ${email}`);
  return user as { email: string; id: string; admin: boolean; createdByInvitation: unknown; memberships: unknown[] };
}

const keyWorks = async (key: string) =>
  (await fetch(`${gateway.baseUrl}/models`, { headers: { authorization: `Bearer ${key}` } })).status === 200;

describe('an invitation does not make a gateway-wide identity', () => {
  it('ties the login an owner creates by opening their own invitation to their account', async () => {
    // The steps: owner A invites carol, opens the link and picks the password.
    const token = await invite(ownerA, acme, 'carol@other.example');
    const accepted = await anonymousClient(gateway).request('POST', '/api/invitations/accept', {
      token,
      password: 'owner chose this one',
    });
    expect(accepted.status).toBe(200);
    const carol = await userNamed('carol@other.example');
    expect(carol.createdByInvitation).toEqual({ accountId: acme, invitedBy: ownerAId });

    // The operator adds "carol" to another account: refused until confirmed, naming who created the login.
    const refused = await runCli(cli('users', 'add-to-account', 'carol@other.example', '--account', 'globex'), {
      env: gateway.cliEnv,
    });
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('owner@acme.test');
    expect(refused.stderr).toContain('acme');
    expect(refused.stderr).toContain('--confirm');
    const globexMembers = await admin.request('GET', `/api/accounts/${globex}/members`);
    expect(globexMembers.body.map((member: { email: string }) => member.email)).not.toContain('carol@other.example');

    const confirmed = await runCliJson<{ accountId: string }>(
      cli('users', 'add-to-account', 'carol@other.example', '--account', 'globex', '--confirm'),
      { env: gateway.cliEnv },
    );
    expect(confirmed.accountId).toBe(globex);
    // Confirmed by the operator: the login is no longer tied.
    expect((await userNamed('carol@other.example')).createdByInvitation).toBeNull();
  });

  it('asks the operator to confirm before making such a login an admin', async () => {
    const token = await invite(ownerA, acme, 'dave@other.example');
    await anonymousClient(gateway).request('POST', '/api/invitations/accept', { token, password: 'dave by owner a' });
    const dave = await userNamed('dave@other.example');
    const refused = await admin.request('PATCH', `/api/users/${dave.id}`, { admin: true });
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe('login_created_by_invitation');
    expect(refused.body.error.message).toContain('owner@acme.test');
    expect((await userNamed('dave@other.example')).admin).toBe(false);
    const cliRefused = await runCli(cli('users', 'set-admin', 'dave@other.example', 'on'), { env: gateway.cliEnv });
    expect(cliRefused.code).not.toBe(0);
    expect(cliRefused.stderr).toContain('--confirm');
    const confirmed = await admin.request('PATCH', `/api/users/${dave.id}`, {
      admin: true,
      confirmInvitedLogin: true,
    });
    expect(confirmed.status).toBe(200);
    expect(confirmed.body.admin).toBe(true);
    await admin.request('PATCH', `/api/users/${dave.id}`, { admin: false });
  });

  it("unties the login when its holder accepts another account's invitation with it", async () => {
    const token = await invite(ownerA, acme, 'erin@other.example');
    await anonymousClient(gateway).request('POST', '/api/invitations/accept', { token, password: 'erin by owner a' });
    const fromB = await invite(ownerB, globex, 'erin@other.example');
    // Someone with B's link but not the login's password gets nothing.
    const wrong = await anonymousClient(gateway).request('POST', '/api/invitations/accept', {
      token: fromB,
      password: 'a guess at the password',
    });
    expect(wrong.status).toBe(401);
    expect((await userNamed('erin@other.example')).createdByInvitation).not.toBeNull();
    // The holder, signed in, accepts with one click: they hold both links sent to the address.
    const erin = await signIn(gateway, 'erin@other.example', 'erin by owner a');
    const preview = await erin.request('POST', '/api/invitations/preview', { token: fromB });
    expect(preview.body.signedInAsInvitee).toBe(true);
    const joined = await erin.request('POST', '/api/invitations/accept', { token: fromB });
    expect(joined.status).toBe(200);
    expect(joined.body.memberships.map((membership: { accountId: string }) => membership.accountId).sort()).toEqual(
      [acme, globex].sort(),
    );
    expect((await userNamed('erin@other.example')).createdByInvitation).toBeNull();
  });

  it('keeps the login tied when the same inviter invites it to another account of theirs', async () => {
    await createTestUser(gateway, { email: 'two.hats@acme.test', account: 'acme', role: 'owner' });
    await runCliJson(cli('users', 'add-to-account', 'two.hats@acme.test', '--account', 'globex', '--role', 'owner'), {
      env: gateway.cliEnv,
    });
    const twoHats = await signIn(gateway, 'two.hats@acme.test');
    const token = await invite(twoHats, acme, 'heidi@other.example');
    await anonymousClient(gateway).request('POST', '/api/invitations/accept', { token, password: 'heidi by two hats' });
    const heidi = await signIn(gateway, 'heidi@other.example', 'heidi by two hats');
    const second = await invite(twoHats, globex, 'heidi@other.example');
    expect((await heidi.request('POST', '/api/invitations/accept', { token: second })).status).toBe(200);
    // Both links came from the same person: the login still proves nothing beyond what they vouch for.
    expect((await userNamed('heidi@other.example')).createdByInvitation).toMatchObject({ accountId: acme });
  });

  it('refuses a signed-in user accepting an invitation made for someone else', async () => {
    const token = await invite(ownerA, acme, 'frank@other.example');
    const preview = await ownerB.request('POST', '/api/invitations/preview', { token });
    expect(preview.body.signedInAsInvitee).toBe(false);
    const refused = await ownerB.request('POST', '/api/invitations/accept', { token });
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('signed_in_as_someone_else');
    // The invitation is still open.
    expect((await anonymousClient(gateway).request('POST', '/api/invitations/preview', { token })).status).toBe(200);
  });

  it("does not tie a login an operator's invitation created", async () => {
    const token = await invite(admin, acme, 'grace@other.example');
    await anonymousClient(gateway).request('POST', '/api/invitations/accept', { token, password: 'grace chose this' });
    expect((await userNamed('grace@other.example')).createdByInvitation).toBeNull();
  });

  it('previews an invitation the same way whether or not the address has a login anywhere', async () => {
    const existing = await invite(ownerA, acme, 'owner@globex.test');
    const fresh = await invite(ownerA, acme, 'nobody.yet@other.example');
    const anonymous = anonymousClient(gateway);
    const first = (await anonymous.request('POST', '/api/invitations/preview', { token: existing })).body;
    const second = (await anonymous.request('POST', '/api/invitations/preview', { token: fresh })).body;
    const { email: _first, expiresAt: _firstExpiry, ...firstRest } = first;
    const { email: _second, expiresAt: _secondExpiry, ...secondRest } = second;
    expect(firstRest).toEqual(secondRest);
    expect(Object.keys(first).sort()).toEqual(['accountName', 'email', 'expiresAt', 'role', 'signedInAsInvitee']);
  });

  it('refuses a password that cannot make a new login alike, whether or not the address has a login', async () => {
    // An owner probing an address with an invitation of their own: a short or guessable password was refused as a
    // wrong password (401, "already has a login") where the address had a login, as too weak (400) where not.
    await createTestUser(gateway, { email: 'probed@elsewhere.example' });
    const withLogin = await invite(ownerA, acme, 'probed@elsewhere.example');
    const withoutLogin = await invite(ownerA, acme, 'never.seen@elsewhere.example');
    const anonymous = anonymousClient(gateway);
    for (const password of ['short', 'password1234']) {
      const first = await anonymous.request('POST', '/api/invitations/accept', { token: withLogin, password });
      const second = await anonymous.request('POST', '/api/invitations/accept', { token: withoutLogin, password });
      expect(first.status, password).toBe(400);
      expect([first.status, first.body], password).toEqual([second.status, second.body]);
      // Useful to either kind of invitee.
      expect(first.body.error.message).toContain('If this address already has a login, give its password');
    }
    // The invitee who has the login still joins with its password; the new one with a strong one.
    expect(
      (await anonymous.request('POST', '/api/invitations/accept', { token: withLogin, password: testPassword })).status,
    ).toBe(200);
    const joined = await anonymous.request('POST', '/api/invitations/accept', {
      token: withoutLogin,
      password: 'a passphrase of my own',
    });
    expect(joined.status).toBe(200);
  });
});

describe('an invitation holds only while whoever made it may invite', () => {
  // An owner on the way out could otherwise invite another address of their own and come back through it.
  const waysOut: Array<[string, (userId: string) => Promise<{ status: number }>]> = [
    ['removed', (userId) => ownerA.request('DELETE', `/api/accounts/${acme}/members/${userId}`)],
    ['demoted', (userId) => ownerA.request('PATCH', `/api/accounts/${acme}/members/${userId}`, { role: 'member' })],
    ['disabled', (userId) => admin.request('PATCH', `/api/users/${userId}`, { disabled: true })],
  ];
  for (const [wayOut, leave] of waysOut) {
    it(`stops an owner's invitations when the owner is ${wayOut}`, async () => {
      const email = `leaving.${wayOut}@acme.test`;
      const leaving = await createTestUser(gateway, { email, account: 'acme', role: 'owner' });
      const token = await invite(await signIn(gateway, email), acme, `back.door.${wayOut}@elsewhere.example`, 'owner');
      const listed = async () =>
        ((await ownerA.request('GET', `/api/accounts/${acme}/invitations`)).body as Array<{ email: string }>).map(
          (invitation) => invitation.email,
        );
      expect(await listed()).toContain(`back.door.${wayOut}@elsewhere.example`);
      expect((await leave(leaving.id)).status).toBeLessThan(300);
      const anonymous = anonymousClient(gateway);
      const preview = await anonymous.request('POST', '/api/invitations/preview', { token });
      expect(preview.status).toBe(404);
      expect(preview.body.error.code).toBe('invitation_invalid');
      const accepted = await anonymous.request('POST', '/api/invitations/accept', {
        token,
        password: 'my way back in, I hope',
      });
      expect(accepted.status).toBe(404);
      expect(accepted.body.error.code).toBe('invitation_invalid');
      expect(await listed()).not.toContain(`back.door.${wayOut}@elsewhere.example`);
    });
  }

  it('stops an invitation at its expiry, for good', async () => {
    const token = await invite(ownerA, acme, 'too.late@elsewhere.example');
    const db = gateway.gateway.database.db;
    // Read straight from the service: a session would end too once the clock moves past its lifetime.
    const listed = async () => (await listInvitations(db, acme)).map((invitation) => invitation.email);
    expect(await listed()).toContain('too.late@elsewhere.example');
    // The gateway runs in this process: its clock moves past console.invitation_ttl (timers stay real).
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + gateway.gateway.config.console.invitationTtlMs + 1000 });
    try {
      const anonymous = anonymousClient(gateway);
      const preview = await anonymous.request('POST', '/api/invitations/preview', { token });
      expect([preview.status, preview.body.error?.code]).toEqual([404, 'invitation_invalid']);
      const accepted = await anonymous.request('POST', '/api/invitations/accept', {
        token,
        password: 'just a bit too late',
      });
      expect([accepted.status, accepted.body.error?.code]).toEqual([404, 'invitation_invalid']);
      expect(await listed()).not.toContain('too.late@elsewhere.example');
      expect(await findUserByEmail(db, 'too.late@elsewhere.example')).toBeUndefined();
    } finally {
      vi.useRealTimers();
    }
  });

  it("keeps the remaining owners' and the operator's invitations", async () => {
    const fromOwner = await invite(ownerA, acme, 'still.welcome@elsewhere.example');
    const fromOperator = await invite(admin, acme, 'also.welcome@elsewhere.example');
    const anonymous = anonymousClient(gateway);
    for (const token of [fromOwner, fromOperator]) {
      expect((await anonymous.request('POST', '/api/invitations/preview', { token })).status).toBe(200);
    }
  });
});

describe('e-mail addresses', () => {
  it('refuses an address with characters that show as nothing or reorder the text', async () => {
    // Each would read on the Users page exactly like owner@acme.test (or, reversed, like something else).
    for (const email of [
      'own\u200ber@acme.test',
      'owner\u2060@acme.test',
      '\u202eowner@acme.test',
      'owner@acme.test\u00ad',
    ]) {
      const invited = await ownerA.request('POST', `/api/accounts/${acme}/invitations`, { email, role: 'owner' });
      expect(invited.status, JSON.stringify(email)).toBe(400);
      expect(invited.body.error.code).toBe('invalid_email');
      const created = await admin.request('POST', '/api/users', { email, password: 'a strong passphrase here' });
      expect(created.status, JSON.stringify(email)).toBe(400);
      expect(created.body.error.code).toBe('invalid_email');
    }
  });

  it('refuses look-alike letters of another script, naming the field, and keeps addresses of one script', async () => {
    // Each would read on the Users page like a Latin address (or another login) it is not.
    for (const [email, part] of [
      ['p\u0430ypal@acme.test', 'local part'], // Cyrillic "а" among Latin letters
      ['owner@p\u0430ypal.test', 'domain'],
      ['\u0430\u0441\u0435@acme.test', 'local part'], // "асе": all Cyrillic, all looking Latin
      ['\u0131nvoices@acme.test', 'local part'], // the dotless "ı"
      ['\u03c1aypal@acme.test', 'local part'], // Greek "ρ"
    ] as const) {
      const invited = await ownerA.request('POST', `/api/accounts/${acme}/invitations`, { email, role: 'member' });
      expect([invited.status, invited.body.error?.code, invited.body.error?.param], email).toEqual([
        400,
        'invalid_email',
        'email',
      ]);
      expect(invited.body.error.message).toContain(part);
      const created = await admin.request('POST', '/api/users', { email, password: 'a strong passphrase here' });
      expect([created.status, created.body.error?.code, created.body.error?.param], email).toEqual([
        400,
        'invalid_email',
        'email',
      ]);
    }
    // Internationalized addresses in one script (or Latin with Japanese, as UTS #39 allows) still work.
    for (const email of [
      '\u043f\u043e\u0447\u0442\u0430@\u043f\u0440\u0438\u043c\u0435\u0440.test', // почта@пример
      'j\u00f6rg.m\u00fcller@stra\u00dfe.test',
      '\u03b4\u03bf\u03ba\u03b9\u03bc\u03ae@acme.test', // δοκιμή
      '\u5c71\u7530\u3055\u3093@acme.test', // 山田さん
      'taro\u5c71\u7530@acme.test',
    ]) {
      const invited = await ownerA.request('POST', `/api/accounts/${acme}/invitations`, { email, role: 'member' });
      expect(invited.status, email).toBe(201);
      expect(invited.body.email).toBe(email);
    }
  });

  it('folds full-width and other compatibility forms, as it folds case', async () => {
    // "ＯＷＮＥＲ@ＧＬＯＢＥＸ.test" is owner@globex.test: no second login that looks like it.
    const token = await invite(ownerA, acme, 'ＯＷＮＥＲ@ＧＬＯＢＥＸ.test');
    const anonymous = anonymousClient(gateway);
    expect((await anonymous.request('POST', '/api/invitations/preview', { token })).body.email).toBe(
      'owner@globex.test',
    );
    const taken = await anonymous.request('POST', '/api/invitations/accept', {
      token,
      password: 'a login of my own now',
    });
    expect(taken.status).toBe(401);
    expect(
      (
        await admin.request('POST', '/api/users', {
          email: 'ｏｗｎｅｒ@acme.test',
          password: 'another passphrase here',
        })
      ).body.error.code,
    ).toBe('user_exists');
    // And its holder signs in with either form.
    expect((await signIn(gateway, 'Ｏwner@globex.test')).cookie).toBeDefined();
  });
});

describe('a password change or reset revokes the management tokens', () => {
  it('revokes them when the user changes the password, and says so', async () => {
    await createTestUser(gateway, { email: 'changer@acme.test', account: 'acme' });
    const session = await signIn(gateway, 'changer@acme.test');
    const token = (await session.request('POST', '/api/tokens', { name: 'script' })).body.token;
    expect((await tokenClient(gateway, token).request('GET', '/api/accounts')).status).toBe(200);
    const changed = await session.request('POST', '/api/session/password', {
      currentPassword: testPassword,
      newPassword: 'a completely new passphrase',
    });
    expect(changed.status).toBe(200);
    expect(changed.body.managementTokensRevoked).toBe(1);
    expect(changed.body.message).toContain('1 management token revoked');
    const refused = await tokenClient(gateway, token).request('GET', '/api/accounts');
    expect(refused.status).toBe(401);
    expect(refused.body.error.code).toBe('invalid_token');
    // The session that made the change was replaced too (console-isolation.security.test.ts): sign in anew.
    const again = await signIn(gateway, 'changer@acme.test', 'a completely new passphrase');
    const tokens = await again.request('GET', '/api/tokens');
    expect(tokens.body.map((entry: { status: string }) => entry.status)).toEqual(['revoked']);
  });

  it("revokes them when the operator resets the password, and the CLI's message says so", async () => {
    await createTestUser(gateway, { email: 'forgetful@acme.test', account: 'acme' });
    const session = await signIn(gateway, 'forgetful@acme.test');
    const tokens = [
      (await session.request('POST', '/api/tokens', { name: 'one' })).body.token,
      (await session.request('POST', '/api/tokens', { name: 'two' })).body.token,
    ];
    const reset = await runCli(cli('users', 'set-password', 'forgetful@acme.test'), {
      env: gateway.cliEnv,
      input: 'a password from the operator\n',
    });
    expect(reset.code).toBe(0);
    expect(reset.stdout).toContain('1 session ended and 2 management tokens revoked');
    for (const token of tokens) {
      expect((await tokenClient(gateway, token).request('GET', '/api/accounts')).status).toBe(401);
    }
    expect((await session.request('GET', '/api/session')).status).toBe(401);
  });

  it('refuses a guessable new password, saying why', async () => {
    await createTestUser(gateway, { email: 'weak@acme.test', account: 'acme' });
    const session = await signIn(gateway, 'weak@acme.test');
    for (const [password, reason] of [
      ['aaaaaaaaaaaa', 'repeats characters'],
      ['password1234', 'commonly used password'],
      ['weak@acme.test2024', 'e-mail address'],
    ] as const) {
      const refused = await session.request('POST', '/api/session/password', {
        currentPassword: testPassword,
        newPassword: password,
      });
      expect(refused.status, password).toBe(400);
      expect(refused.body.error.code).toBe('password_too_weak');
      expect(refused.body.error.message, password).toContain(reason);
    }
    const created = await admin.request('POST', '/api/users', { email: 'weakling@x.test', password: 'aaaaaaaaaa' });
    expect(created.status).toBe(400);
    expect(created.body.error.code).toBe('password_too_weak');
    const cliCreated = await runCli(cli('users', 'create', 'weakling@x.test'), {
      env: gateway.cliEnv,
      input: 'password1234\n',
    });
    expect(cliCreated.code).not.toBe(0);
    expect(cliCreated.stderr).toContain('too easy to guess');
  });
});

describe('key limits and budgets: whoever set a limit bounds who may loosen it', () => {
  let keyId: string;
  const limitsOf = (client: ApiClient, body: unknown) =>
    client.request('PATCH', `/api/accounts/${acme}/keys/${keyId}/limits`, body);

  beforeAll(async () => {
    keyId = (await ownerA.request('POST', `/api/accounts/${acme}/keys`, { name: 'metered' })).body.id;
  });

  it('lets no member change them', async () => {
    const refused = await limitsOf(memberA, { requestsPerMinute: null });
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('owner_only');
  });

  it('lets an owner tighten what an operator set, never loosen or remove it; records who set what', async () => {
    const set = await limitsOf(admin, { requestsPerMinute: 100 });
    expect(set.status).toBe(200);
    const adminId = (await admin.request('GET', '/api/session')).body.user.id;
    expect(set.body.limitsSetBy.requestsPerMinute).toEqual({ role: 'operator', userId: adminId });
    expect(set.body.operatorLimits).toEqual({ requestsPerMinute: 100 });

    const tighter = await limitsOf(ownerA, { requestsPerMinute: 50 });
    expect(tighter.status).toBe(200);
    expect(tighter.body.limits.requestsPerMinute).toBe(50);
    expect(tighter.body.limitsSetBy.requestsPerMinute).toEqual({ role: 'owner', userId: ownerAId });
    // Back up to the operator's value is still within it.
    expect((await limitsOf(ownerA, { requestsPerMinute: 100 })).status).toBe(200);
    for (const loosened of [101, null]) {
      const refused = await limitsOf(ownerA, { requestsPerMinute: loosened });
      expect(refused.status, String(loosened)).toBe(403);
      expect(refused.body.error.code).toBe('limit_set_by_operator');
      expect(refused.body.error.message).toContain('100');
    }
    const key = await ownerA.request('GET', `/api/accounts/${acme}/keys/${keyId}`);
    expect(key.body.limits.requestsPerMinute).toBe(100);
  });

  it('treats the configured key defaults as the operator bound, for budgets as for rates', async () => {
    // limits.key_defaults.daily_budget_usd is 100 in this gateway's configuration.
    const removed = await limitsOf(ownerA, { dailyBudgetUsd: null });
    expect(removed.status).toBe(403);
    expect(removed.body.error.code).toBe('limit_set_by_operator');
    expect((await limitsOf(ownerA, { dailyBudgetUsd: 150 })).status).toBe(403);
    expect((await limitsOf(ownerA, { dailyBudgetUsd: 10 })).status).toBe(200);
    // A limit nobody bounds is the owner's to set and remove.
    expect((await limitsOf(ownerA, { tokensPerMinute: 5000 })).status).toBe(200);
    expect((await limitsOf(ownerA, { tokensPerMinute: null })).status).toBe(200);
  });

  it('lets an operator do anything, including lifting its own bound for the owner', async () => {
    expect((await limitsOf(admin, { requestsPerMinute: null, dailyBudgetUsd: null })).status).toBe(200);
    const owner = await limitsOf(ownerA, { requestsPerMinute: 100_000, dailyBudgetUsd: 1000 });
    expect(owner.status).toBe(200);
    const cliSet = await runCliJson<{ limitsSetBy: Record<string, unknown> }>(
      cli('keys', 'set-limits', keyId, '--rpm', '10'),
      { env: gateway.cliEnv },
    );
    expect(cliSet.limitsSetBy.requestsPerMinute).toEqual({ role: 'operator', userId: null });
    expect((await limitsOf(ownerA, { requestsPerMinute: 11 })).status).toBe(403);
  });
});

describe('a leaked key is revoked by its value', () => {
  it('with the CLI, never printing the key', async () => {
    const { key, id } = await gateway.newKey({ name: 'leaked-in-a-repo' });
    const human = await runCli(cli('keys', 'revoke', key), { env: gateway.cliEnv });
    expect(human.code).toBe(0);
    expect(human.stdout).toContain(`Revoked ${id}`);
    expect(human.stdout + human.stderr).not.toContain(key.slice(6, -4));
    expect(await keyWorks(key)).toBe(false);

    const another = await gateway.newKey({ name: 'leaked-in-a-screenshot' });
    const json = await runCliJson<{ id: string; status: string }>(cli('keys', 'revoke', another.key), {
      env: gateway.cliEnv,
    });
    expect(json).toMatchObject({ id: another.id, status: 'revoked' });
    expect(JSON.stringify(json)).not.toContain(another.key.slice(6, -4));

    // One character off: the checksum catches it, and the text is not echoed.
    const typo = `${another.key.slice(0, 20)}${another.key[20] === 'a' ? 'b' : 'a'}${another.key.slice(21)}`;
    const refused = await runCli(cli('keys', 'revoke', typo), { env: gateway.cliEnv });
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('checksum');
    expect(refused.stderr).not.toContain(typo.slice(6, -4));
  });

  it('through /api, for the members of its account, never echoing it', async () => {
    const created = await memberA.request('POST', `/api/accounts/${acme}/keys`, { name: 'pasted-in-chat' });
    const key = created.body.key as string;
    const revoked = await memberA.request('POST', '/api/keys/revoke', { key });
    expect(revoked.status).toBe(200);
    expect(revoked.body).toMatchObject({ id: created.body.id, status: 'revoked' });
    expect(JSON.stringify(revoked.body)).not.toContain(key.slice(6, -4));
    expect(await keyWorks(key)).toBe(false);
    const malformed = await memberA.request('POST', '/api/keys/revoke', { key: `${key.slice(0, -1)}!` });
    expect(malformed.status).toBe(400);
    expect(malformed.body.error.code).toBe('invalid_key');
    expect(JSON.stringify(malformed.body)).not.toContain(key.slice(6, -4));
  });
});

describe("GitHub's secret scanning", () => {
  const path = '/api/secret-scanning/github';

  function report(alerts: unknown, options: { keyId?: string; signer?: typeof github.privateKey } = {}) {
    const body = JSON.stringify(alerts);
    const signature = sign('sha256', Buffer.from(body), options.signer ?? github.privateKey).toString('base64');
    return fetch(`${gateway.url}${path}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'github-public-key-identifier': options.keyId ?? githubKeyId,
        'github-public-key-signature': signature,
      },
      body,
    });
  }

  const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

  it('revokes each of our keys it reports at once and reports it back as a true positive', async () => {
    const db = gateway.gateway.database.db;
    const active = await gateway.newKey({ name: 'committed-by-mistake' });
    const alreadyRevoked = await createKey(db, gateway.secret, { account: 'acme', name: 'old' });
    await revokeKey(db, alreadyRevoked.info.id);
    const notOurs = generateKey();
    const malformed = `${active.key.slice(0, -1)}${active.key.endsWith('a') ? 'b' : 'a'}`;
    const alerts = [active.key, alreadyRevoked.key, notOurs, malformed].map((token) => ({
      token,
      type: 'switchboard_api_key',
      url: 'https://github.com/octocat/hello/blob/abc/.env',
      source: 'content',
    }));
    const response = await report(alerts);
    expect(response.status).toBe(200);
    const text = await response.text();
    for (const token of [active.key, alreadyRevoked.key, notOurs, malformed]) expect(text).not.toContain(token);
    expect(JSON.parse(text)).toEqual([
      { token_hash: sha256(active.key), token_type: 'switchboard_api_key', label: 'true_positive' },
      { token_hash: sha256(alreadyRevoked.key), token_type: 'switchboard_api_key', label: 'true_positive' },
      // A well-formed key that is not ours may be another installation's: left out. A bad checksum is no key.
      { token_hash: sha256(malformed), token_type: 'switchboard_api_key', label: 'false_positive' },
    ]);
    expect(await keyWorks(active.key)).toBe(false);
    expect(gateway.logLines.join('\n')).toContain('GitHub secret scanning found an API key in public: revoked it');
    expect(gateway.logLines.join('\n')).not.toContain(active.key);
  });

  it('refuses reports that are not signed by the named key, and revokes nothing', async () => {
    const victim = await gateway.newKey({ name: 'not-leaked' });
    const alerts = [{ token: victim.key, type: 'switchboard_api_key', url: '', source: 'content' }];
    const impostor = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
    const forged = await report(alerts, { signer: impostor.privateKey });
    expect(forged.status).toBe(401);
    expect((await jsonOf(forged)).error.code).toBe('signature_invalid');
    const unknownKey = await report(alerts, { keyId: 'no-such-key' });
    expect(unknownKey.status).toBe(401);
    const unsigned = await fetch(`${gateway.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(alerts),
    });
    expect(unsigned.status).toBe(401);
    expect((await jsonOf(unsigned)).error.code).toBe('signature_missing');
    // A signature over other bytes (the body re-serialised with other spacing) does not verify.
    const body = JSON.stringify(alerts, null, 1);
    const tampered = await fetch(`${gateway.url}${path}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'github-public-key-identifier': githubKeyId,
        'github-public-key-signature': sign('sha256', Buffer.from(JSON.stringify(alerts)), github.privateKey).toString(
          'base64',
        ),
      },
      body,
    });
    expect(tampered.status).toBe(401);
    expect(await keyWorks(victim.key)).toBe(true);
  });

  it('uses verification keys from the configuration, and answers 503 when it cannot fetch the others', async () => {
    const configured = await startTestGateway({
      mock,
      config: {
        secret_scanning: {
          enabled: true,
          // Nothing listens there: only the configured key can verify.
          public_keys_url: 'http://127.0.0.1:9/meta/public_keys/secret_scanning',
          public_keys: [
            { key_identifier: 'configured', key: github.publicKey.export({ type: 'spki', format: 'pem' }) },
          ],
        },
      },
    });
    try {
      const leaked = await configured.newKey({ name: 'leaked' });
      const body = JSON.stringify([{ token: leaked.key, type: 'switchboard_api_key', url: '', source: 'npm' }]);
      const post = (keyId: string) =>
        fetch(`${configured.url}${path}`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'github-public-key-identifier': keyId,
            'github-public-key-signature': sign('sha256', Buffer.from(body), github.privateKey).toString('base64'),
          },
          body,
        });
      const unavailable = await post('rotated-key');
      expect(unavailable.status).toBe(503);
      expect((await jsonOf(unavailable)).error.code).toBe('verification_keys_unavailable');
      const verified = await post('configured');
      expect(verified.status).toBe(200);
      expect((await jsonOf(verified))[0].label).toBe('true_positive');
      const models = await fetch(`${configured.baseUrl}/models`, {
        headers: { authorization: `Bearer ${leaked.key}` },
      });
      expect(models.status).toBe(401);
    } finally {
      await configured.close();
    }
  });
});
