import type { KyselyPlugin } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { buildModelCatalog } from '../../src/access/policy.js';
import { createAccount } from '../../src/accounts/service.js';
import { type DatabaseHandle, openDatabase } from '../../src/db/connect.js';
import { Authenticator, type Principal } from '../../src/keys/authenticate.js';
import { createKey, revokeKey, setKeyLimits } from '../../src/keys/service.js';
import { noLimits } from '../../src/limits/settings.js';
import { createLogger } from '../../src/observability/logger.js';
import { type OpenTestDatabase, openTestDatabase } from '../support/database.js';

/**
 * A key change (revoked, new limits) takes effect for every request that arrives after the change was announced
 * (invalidateAll), even one that arrives while a lookup of the same key, begun before the change, is still on its way
 * back from the database: that lookup read the key as it was.
 */

let database: OpenTestDatabase | undefined;
let lookups: DatabaseHandle | undefined;
afterEach(async () => {
  await lookups?.close();
  await database?.close();
  lookups = undefined;
  database = undefined;
});

/** Holds every query's result until `release()`: a lookup that has read the database but not yet returned. */
function holdResults() {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let held = 0;
  const plugin: KyselyPlugin = {
    transformQuery: (args) => args.node,
    transformResult: async (args) => {
      held++;
      await released;
      return args.result;
    },
  };
  return { plugin, release, held: () => held };
}

async function setUp() {
  database = await openTestDatabase('key-lookup');
  const db = database.handle.db;
  const secret = Buffer.alloc(32, 7);
  await createAccount(db, { name: 'acme' });
  const created = await createKey(db, secret, { account: 'acme', name: 'app' });
  const gate = holdResults();
  // The lookups go through a connection of their own, as another process's would: a held one blocks no write.
  lookups = await openDatabase(database.config);
  const authenticator = new Authenticator({
    db: lookups.db.withPlugin(gate.plugin),
    secret,
    catalog: buildModelCatalog([]),
    logger: createLogger('silent'),
    cacheTtlMs: 60_000,
    limitDefaults: { account: noLimits, key: noLimits },
  });
  return { db, key: created.key, keyId: created.info.id, gate, authenticator };
}

const outcome = (result: Promise<Principal> | Principal) =>
  Promise.resolve(result).then(
    (principal) => principal,
    (error: { code?: string }) => error.code ?? 'error',
  );

describe('a key lookup under way when the key changes', () => {
  it('is not shared with a request that arrives after a revocation was announced', async () => {
    const { db, key, keyId, gate, authenticator } = await setUp();
    const before = outcome(authenticator.authenticate(`Bearer ${key}`, false));
    await expect.poll(() => gate.held()).toBe(1);
    await revokeKey(db, keyId);
    authenticator.invalidateAll();
    const after = outcome(authenticator.authenticate(`Bearer ${key}`, false));
    gate.release();
    expect(await before).toMatchObject({ keyId });
    expect(await after).toBe('invalid_api_key');
  });

  it('gives a request that arrives after a limit change the new limits', async () => {
    const { db, key, keyId, gate, authenticator } = await setUp();
    const before = outcome(authenticator.authenticate(`Bearer ${key}`, false));
    await expect.poll(() => gate.held()).toBe(1);
    await setKeyLimits(db, keyId, { requestsPerMinute: 1 });
    authenticator.invalidateAll();
    const after = outcome(authenticator.authenticate(`Bearer ${key}`, false));
    gate.release();
    expect(((await before) as Principal).limitSubjects).toEqual([]);
    expect(((await after) as Principal).limitSubjects).toMatchObject([{ limits: { requestsPerMinute: 1 } }]);
    // The lookup begun before the change was not cached: the next request reads the key as it is now.
    expect((authenticator.authenticate(`Bearer ${key}`, false) as Principal).limitSubjects).toHaveLength(1);
  });
});
