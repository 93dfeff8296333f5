import type { Kysely } from 'kysely';

/**
 * The request log gets `served_latency_ms`: the upstream latency of the attempt that served the request. With it, a
 * request served by its first attempt (nearly all of them) needs no `attempts` JSON: that one attempt is the row's own
 * served model, deployment, provider and upstream model, a success with status 200 after no wait, and this latency
 * (request-log/attempts-column.ts writes the JSON only when it says more, and rebuilds the single attempt).
 * The JSON was ~40% of a row's bytes and the largest text the SQLite thread bound per row. Rows written before keep
 * their JSON and read as they did.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('request_log').addColumn('served_latency_ms', 'integer').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('request_log').dropColumn('served_latency_ms').execute();
}
