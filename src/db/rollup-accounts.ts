import { type RawBuilder, sql } from 'kysely';

/**
 * The accounts a rollup table holds, found by one seek per account (a loose index scan of the primary key, whose
 * first column is the account), as a subquery. A statement that filters on it reads each account's rows as one range
 * of the primary key instead of the whole table: SQLite's usage reports across accounts, and retention on both engines.
 */
export function rolledUpAccounts(table: string): RawBuilder<string> {
  const from = sql.table(table);
  return sql<string>`(with recursive seen(id) as (select min(account_id) from ${from} union all select (select min(account_id) from ${from} where account_id > seen.id) from seen where seen.id is not null) select id from seen where id is not null)`;
}
