import type { CreateTableBuilder } from 'kysely';

export type Dialect = 'sqlite' | 'postgres';

/** An integer primary key the database numbers itself; the one column type the two engines spell differently. */
export function autoIncrementId<Name extends string>(
  table: CreateTableBuilder<Name, never>,
  dialect: Dialect,
): CreateTableBuilder<Name, 'id'> {
  return dialect === 'postgres'
    ? table.addColumn('id', 'bigserial', (column) => column.primaryKey())
    : table.addColumn('id', 'integer', (column) => column.primaryKey().autoIncrement());
}
