// The rows a long /v1/responses conversation writes: N turns (previous_response_id each time) stored through the
// SQLite writer the server uses (dist/, so `npm run build` first), the conversation loaded before each turn and the
// clock moved `--every` seconds per turn. Counts the rows each turn updates (the earlier responses whose expiry it
// moves) and the time spent in the writer. `--every-turn` stores with the policy before issue 23's fix (every earlier
// response raised to the new one's expiry on every turn), for comparison.
//   node bench/conversation-writes.mjs [--turns N] [--every S] [--every-turn]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const load = (file) => import(path.join(root, 'dist', file));
const { parseConfig } = await load('config/loader.js');
const { openDatabase } = await load('db/connect.js');
const { insertAccount } = await load('db/repositories/accounts.js');
const { loadConversation } = await load('db/repositories/responses.js');
const { createSqliteResponseWriter } = await load('db/repositories/responses-sqlite-writer.js');
const { toResponseRecord } = await load('api/v1/responses/stored-response.js');
const { createResponseObject } = await load('api/v1/responses/response-object.js');
const { normalizeInput } = await load('api/v1/responses/stored-items.js');
const { validateResponsesRequest } = await load('api/v1/responses/validate-request.js');

const option = (name, fallback) => {
  const index = process.argv.indexOf(name);
  return index === -1 ? fallback : Number(process.argv[index + 1]);
};
const turns = option('--turns', 1000);
const everyMs = option('--every', 5) * 1000;
const everyTurn = process.argv.includes('--every-turn');
const retentionMs = 30 * 86_400_000;

const directory = mkdtempSync(path.join(tmpdir(), 'switchboard-conversation-writes-'));
const database = await openDatabase(parseConfig({ server: { data_dir: directory } }, 'bench'));
try {
  const sqlite = database.sqlite;
  if (!sqlite) throw new Error('SQLite only');
  await insertAccount(database.db, {
    id: 'acct',
    name: 'acct',
    allowed_models: '["*"]',
    disabled: 0,
    log_bodies: 0,
    created_at: 0,
    limits: null,
  });
  const write = createSqliteResponseWriter(sqlite);
  const totalChanges = sqlite.prepare('select total_changes() as changes').pluck();
  // An agent's turn: a tool result in, a paragraph out (~2.5 KB a row).
  const answer = 'The tool returned what was expected; next step follows. '.repeat(30);
  let now = Date.UTC(2026, 0, 1);
  let previous;
  let updated = 0;
  let writerMs = 0;
  for (let turn = 0; turn < turns; turn++) {
    const conversation = previous ? await loadConversation(database.db, 'acct', previous, now) : undefined;
    const request = validateResponsesRequest({
      model: 'm',
      input: `tool output of turn ${turn}`,
      ...(previous ? { previous_response_id: previous } : {}),
    });
    const response = {
      ...createResponseObject(request, { id: `resp_${turn}`, createdAt: now / 1000, model: 'm' }),
      status: 'completed',
      output: [
        {
          id: `msg_${turn}`,
          type: 'message',
          status: 'completed',
          role: 'assistant',
          content: [{ type: 'output_text', text: answer, annotations: [], logprobs: [] }],
        },
      ],
    };
    const ancestors = conversation?.turns ?? [];
    const { record } = toResponseRecord(response, {
      accountId: 'acct',
      keyId: 'key',
      inputItems: normalizeInput(request.input),
      now,
      retentionMs,
      ancestors,
    });
    if (everyTurn) {
      record.expiresAt = now + retentionMs;
      record.extendedIds = ancestors.map((ancestor) => ancestor.responseId);
    }
    const before = totalChanges.get();
    const started = process.hrtime.bigint();
    write([record]);
    writerMs += Number(process.hrtime.bigint() - started) / 1e6;
    // The row and its item keys are inserts; the rest are earlier responses updated.
    updated += totalChanges.get() - before - 1 - record.itemIds.length;
    previous = record.id;
    now += everyMs;
  }
  const policy = everyTurn ? 'every turn (before)' : 'with slack';
  console.log(
    `${turns} turns, one every ${everyMs / 1000} s, ${policy}: ${updated} rows updated, writer ${writerMs.toFixed(0)} ms`,
  );
} finally {
  await database.close();
  rmSync(directory, { recursive: true, force: true });
}
