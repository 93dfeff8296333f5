import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import type { GroupName, GroupNames } from './usage-report.js';

/** Names of the keys and accounts a usage report groups by (rollups hold only ids). */
export function groupNamesFrom(db: Kysely<Database>): GroupNames {
  return async (groupBy, ids) => {
    const names = new Map<string, GroupName>();
    if (groupBy === 'key') {
      const keys = await db.selectFrom('api_keys').select(['id', 'name', 'display']).where('id', 'in', ids).execute();
      for (const key of keys) names.set(key.id, { name: key.name, detail: key.display });
    } else if (groupBy === 'account') {
      const accounts = await db.selectFrom('accounts').select(['id', 'name']).where('id', 'in', ids).execute();
      for (const account of accounts) names.set(account.id, { name: account.name });
    }
    return names;
  };
}
