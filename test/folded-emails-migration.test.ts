import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DatabaseHandle, migrateToLatest, migratorFor } from '../src/db/connect.js';
import { findUserByEmail } from '../src/db/repositories/users.js';
import { createLogger } from '../src/observability/logger.js';
import { warnOfLookAlikeEmails } from '../src/startup/warn-look-alike-emails.js';
import { warnOfUnfoldedEmails } from '../src/startup/warn-unfolded-emails.js';
import { normaliseEmail } from '../src/users/service.js';
import { insertTestAccounts, type OpenTestDatabase, openTestDatabase } from './support/database.js';

/**
 * Migration 0016 on both engines (the postgres project runs this file again): addresses stored before sign-in folded
 * them with NFKC are folded, so their logins can sign in again; two logins that fold to one address are left as they
 * were, and every start-up names them (and any address sign-in refuses outright).
 */

let opened: OpenTestDatabase;
let database: DatabaseHandle;

beforeAll(async () => {
  opened = await openTestDatabase('folded-emails');
  database = opened.handle;
  await insertTestAccounts(database, ['acct_a'], Date.now());
});

afterAll(() => opened.close());

async function insertUser(id: string, email: string) {
  await database.db
    .insertInto('users')
    .values({
      id,
      email,
      password_hash: null,
      is_admin: 0,
      disabled: 0,
      created_at: 1,
      last_sign_in_at: null,
      password_changed_at: null,
      invitation_account_id: null,
      invitation_inviter_id: null,
    })
    .execute();
}

async function emailOf(id: string) {
  return (await database.db.selectFrom('users').select('email').where('id', '=', id).executeTakeFirstOrThrow()).email;
}

describe('migration 0016: folded e-mail addresses', () => {
  it('folds what it can, leaves two logins of one address alone, and the start-up names those', async () => {
    const down = await migratorFor(database).migrateTo('0015-response-states');
    expect(down.error).toBeUndefined();
    await insertUser('usr_fullwidth', 'ａｄｍｉｎ@example.test');
    await insertUser('usr_ligature', 'ﬁnance@example.test');
    await insertUser('usr_plain', 'plain@example.test');
    // Two logins of one address once folded: the one already folded keeps signing in, the other is left for an operator.
    await insertUser('usr_folded_twin', 'twin@example.test');
    await insertUser('usr_fullwidth_twin', 'ｔｗｉｎ@example.test');
    // Stored before invisible characters were refused: sign-in cannot take it, the warning names it too.
    await insertUser('usr_zero_width', 'own\u200ber@example.test');
    await database.db
      .insertInto('invitations')
      .values({
        id: 'inv_fullwidth',
        account_id: 'acct_a',
        email: 'ｎｅｗ@example.test',
        role: 'member',
        token_hash: 'hash-1',
        created_by: null,
        created_at: 1,
        expires_at: Number.MAX_SAFE_INTEGER,
        accepted_at: null,
        revoked_at: null,
      })
      .execute();

    await migrateToLatest(database);

    expect(await emailOf('usr_fullwidth')).toBe('admin@example.test');
    expect(await emailOf('usr_ligature')).toBe('finance@example.test');
    expect(await emailOf('usr_plain')).toBe('plain@example.test');
    expect(await emailOf('usr_folded_twin')).toBe('twin@example.test');
    expect(await emailOf('usr_fullwidth_twin')).toBe('ｔｗｉｎ@example.test');
    // Sign-in's lookup (a full-width address typed, or a plain one) finds the login again.
    expect((await findUserByEmail(database.db, normaliseEmail('ＡＤＭＩＮ@example.test')))?.id).toBe('usr_fullwidth');
    const invitation = await database.db
      .selectFrom('invitations')
      .select('email')
      .where('id', '=', 'inv_fullwidth')
      .executeTakeFirstOrThrow();
    expect(invitation.email).toBe('new@example.test');

    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk));
        done();
      },
    });
    await warnOfUnfoldedEmails(database.db, createLogger('info', sink));
    const warnings = lines.map((line) => JSON.parse(line));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({
      level: 40,
      users: [
        {
          id: 'usr_fullwidth_twin',
          email: 'ｔｗｉｎ@example.test',
          reason: 'another login has the address twin@example.test',
        },
        { id: 'usr_zero_width', email: 'own\u200ber@example.test', reason: expect.stringContaining('invisible') },
      ],
    });
  });

  it('names logins stored with look-alike letters at start-up, and leaves them as they are', async () => {
    await insertUser('usr_cyrillic_a', 'p\u0430ypal@example.test');
    await insertUser('usr_one_script', '\u043f\u043e\u0447\u0442\u0430@example.test');
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk));
        done();
      },
    });
    await warnOfLookAlikeEmails(database.db, createLogger('info', sink));
    const warnings = lines.map((line) => JSON.parse(line));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({
      level: 40,
      users: [
        { id: 'usr_cyrillic_a', email: 'p\u0430ypal@example.test', reason: expect.stringContaining('Cyrillic') },
        // Left unfolded by the migration (above): its full-width letters read as "twin" too.
        { id: 'usr_fullwidth_twin', email: 'ｔｗｉｎ@example.test', reason: expect.stringContaining('looks like') },
      ],
    });
    // Nothing is changed: the login still signs in under its address.
    expect(await emailOf('usr_cyrillic_a')).toBe('p\u0430ypal@example.test');
  });
});
