import type { Kysely } from 'kysely';

/**
 * Routing in the request log: the public model that served the request (the requested one or a fallback), the
 * deployment (`provider/upstream_model`) that served it, how many upstream attempts were made and what each did
 * (JSON), and prompt tokens written to a provider's prompt cache (priced apart from input and cached input).
 */
const columns = [
  ['served_model', 'text'],
  ['deployment', 'text'],
  ['attempt_count', 'integer'],
  ['attempts', 'text'],
  ['cache_write_tokens', 'integer'],
] as const;

export async function up(db: Kysely<unknown>): Promise<void> {
  // One column per statement: SQLite's ALTER TABLE adds one at a time.
  for (const [name, type] of columns) {
    await db.schema.alterTable('request_log').addColumn(name, type).execute();
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const [name] of [...columns].reverse()) {
    await db.schema.alterTable('request_log').dropColumn(name).execute();
  }
}
