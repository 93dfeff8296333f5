import { describe, expect, it, vi } from 'vitest';
import { createAccount } from '../src/accounts/service.js';
import { acceptInvitation, createInvitation } from '../src/users/invitations.js';
import * as passwords from '../src/users/password.js';
import { createUser } from '../src/users/service.js';
import { useGatewayWithMock } from './support/gateway-fixture.js';

/**
 * Accepting an invitation with a password does the same work whether or not the invited address has a login, so the
 * time the answer takes does not tell an inviter probing addresses which have one: one strength check first, and for a
 * password strong enough, one password check (the login's hash, or a decoy). The answers themselves are compared over HTTP in
 * account-security.security.test.ts; this counts the slow steps (scrypt, zxcvbn) rather than timing them.
 */

vi.mock('../src/users/password.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../src/users/password.js')>();
  return {
    ...real,
    verifyPassword: vi.fn(real.verifyPassword),
    hashPassword: vi.fn(real.hashPassword),
    checkPasswordStrength: vi.fn(real.checkPasswordStrength),
  };
});

const setup = useGatewayWithMock();

describe('accepting an invitation with a password', () => {
  it('checks a weak password for strength alone, before any hash, whether or not the address has a login', async () => {
    const db = setup.gateway.gateway.database.db;
    const account = await createAccount(db, { name: 'probing' });
    await createUser(db, { email: 'has.login@probed.test', password: 'the login holder passphrase' });
    const decoyHash = await passwords.hashPassword('decoy password that nobody has');
    const work: Record<string, { verified: number; hashed: number; strengthChecked: number; answer: string }> = {};
    for (const email of ['has.login@probed.test', 'no.login@probed.test']) {
      const { token } = await createInvitation(db, {
        accountId: account.id,
        email,
        role: 'member',
        createdBy: null,
        ttlMs: 3_600_000,
      });
      vi.mocked(passwords.verifyPassword).mockClear();
      vi.mocked(passwords.hashPassword).mockClear();
      vi.mocked(passwords.checkPasswordStrength).mockClear();
      const answer = await acceptInvitation(db, token, { password: 'password1234', decoyHash }).then(
        () => 'accepted',
        (error: { code?: string }) => error.code ?? 'no code',
      );
      work[email] = {
        verified: vi.mocked(passwords.verifyPassword).mock.calls.length,
        hashed: vi.mocked(passwords.hashPassword).mock.calls.length,
        strengthChecked: vi.mocked(passwords.checkPasswordStrength).mock.calls.length,
        answer,
      };
    }
    // Refused before any hash is checked: no guess at the login's password, so nothing to count as a failed sign-in.
    expect(work['has.login@probed.test']).toEqual({
      verified: 0,
      hashed: 0,
      strengthChecked: 1,
      answer: 'password_too_weak',
    });
    expect(work['no.login@probed.test']).toEqual(work['has.login@probed.test']);
  });
});
