// The console's request log and usage at scale: generates 10,000,000 request-log rows over 90 days for 100 accounts
// (a few hundred keys, several models, providers and endpoints; account sizes skewed so the largest holds ~10%),
// inserted in bulk by SQL on the database itself, then rolls up usage with `switchboard usage rebuild-rollups`, starts
// the real server in its own process and measures the management API the console calls: usage over 30 and 90 days,
// the request log's first page and "load older" with combinations of filters, and a lookup by request id.
// Writes its section of docs/benchmarks.md (between the console-log-<engine> markers) and nothing else of that file.
// Usage: npm run bench:console [-- --engine sqlite|postgres --rows 10000000 --requests 50]
//   --keep keeps the generated database (and its directory, printed at the end) instead of deleting it; --reuse DIR
//   measures a database kept that way without generating it again (a 10M-row load takes ~25 min per engine);
//   --only TEXT measures only the cases whose name contains TEXT (and writes nothing to docs/benchmarks.md).
//   PostgreSQL: --engine postgres with SWITCHBOARD_BENCH_POSTGRES_URL (or SWITCHBOARD_TEST_POSTGRES_URL) naming a
//   server where a database may be created; the bench creates its own and drops it at the end.
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import pg from 'pg';
import { createAccount } from '../dist/accounts/service.js';
import { parseConfig } from '../dist/config/loader.js';
import { openDatabase } from '../dist/db/connect.js';
import { loadKeySecret } from '../dist/keys/secret.js';
import { createKey } from '../dist/keys/service.js';
import { ensurePartitions } from '../dist/request-log/retention.js';
import { createManagementToken } from '../dist/users/management-tokens.js';
import { createUser } from '../dist/users/service.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const argument = (name, fallback) => {
  const index = process.argv.indexOf(`--${name}`);
  return index === -1 ? fallback : process.argv[index + 1];
};
const engine = argument('engine', 'sqlite');
const reuse = argument('reuse', undefined);
const reused = reuse ? JSON.parse(readFileSync(path.join(path.resolve(reuse), 'seeded.json'), 'utf8')) : undefined;
const rowCount = reused ? reused.rowCount : Number(argument('rows', 10_000_000));
const requestsPerCase = Number(argument('requests', 50));
const accountCount = 100;
const keysPerAccount = 3;
const environments = ['production', 'staging', 'development'];
const day = 86_400_000;
const spanDays = 90;
const log = (message) => process.stderr.write(`[bench:console ${engine}] ${message}\n`);
const only = argument('only', undefined);
const work = reuse ? path.resolve(reuse) : mkdtempSync(path.join(tmpdir(), 'switchboard-console-bench-'));
let server;
let dropDatabase;
const keep = process.argv.includes('--keep') || reuse !== undefined;
process.on('exit', () => {
  server?.kill('SIGTERM');
  if (keep) log(`kept ${work}`);
  else rmSync(work, { recursive: true, force: true });
});
process.on('SIGINT', () => process.exit(130));

// Model -> provider, and the share of requests (out of 100) each model gets.
const models = [
  ['gpt-4o-mini', 'openai', 30],
  ['gpt-4o', 'openai', 20],
  ['claude-sonnet', 'anthropic', 20],
  ['gemini-flash', 'gemini', 15],
  ['llama3.2', 'local', 10],
  ['text-embedding-3-small', 'openai', 5],
];

async function createPostgresDatabase() {
  const adminUrl = process.env.SWITCHBOARD_BENCH_POSTGRES_URL ?? process.env.SWITCHBOARD_TEST_POSTGRES_URL;
  if (!adminUrl)
    throw new Error('--engine postgres needs SWITCHBOARD_BENCH_POSTGRES_URL (a server to create a database on)');
  const name = `sbbench_${randomBytes(4).toString('hex')}`;
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  await client.query(`create database ${name}`);
  await client.end();
  dropDatabase = async () => {
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    await admin.query(`drop database if exists ${name} with (force)`);
    await admin.end();
  };
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

const databaseUrl = reused ? reused.databaseUrl : engine === 'postgres' ? await createPostgresDatabase() : undefined;
if (keep) dropDatabase = undefined;
const rawConfig = {
  ...(databaseUrl ? { database: { url: databaseUrl } } : {}),
  server: { host: '127.0.0.1', port: 0, data_dir: path.join(work, 'data') },
  logging: { level: 'info' },
  // The generated rows span 90 days: retention must not start deleting them while the bench runs.
  request_log: { retention: '3650d' },
  providers: [{ name: 'upstream', type: 'openai', base_url: 'http://127.0.0.1:9/v1' }],
  models: models.map(([name]) => ({ name, provider: 'upstream', pricing: { input: 1, output: 4 } })),
};
const configFile = path.join(work, 'switchboard.json.yaml');
writeFileSync(configFile, JSON.stringify(rawConfig));
const config = parseConfig(rawConfig, 'bench');

/** Pseudo-random integers in [0, 2^31 - 1) from the row number, one stream per multiplier (Lehmer, mod 2^31 - 1). */
const hash = (multiplier) => `(((n + 1) * ${multiplier}) % 2147483647)`;

/** The INSERT … SELECT that generates rows [first, end) on the database itself (no row crosses to Node). */
function generateSql(first, end, start) {
  const sequence =
    engine === 'postgres'
      ? `select n from generate_series(${first}::bigint, ${end - 1}::bigint) as n`
      : `with recursive sequence(n) as (select ${first} union all select n + 1 from sequence where n < ${end - 1}) select n from sequence`;
  const requestId = engine === 'postgres' ? `'req_' || lpad(n::text, 10, '0')` : `'req_' || printf('%010d', n)`;
  let modelCase = 'case';
  let providerCase = 'case';
  let cumulative = 0;
  for (const [name, provider, share] of models) {
    cumulative += share;
    modelCase += ` when m < ${cumulative} then '${name}'`;
    providerCase += ` when m < ${cumulative} then '${provider}'`;
  }
  modelCase += ' end';
  providerCase += ' end';
  const embeddingsFrom = 100 - models.at(-1)[2];
  return `insert into request_log (request_id, created_at, account_id, key_id, key_name, model, provider, upstream_model,
      status, outcome, error_type, error_code, error_message, stream, latency_ms, ttft_ms, prompt_tokens,
      completion_tokens, cached_tokens, reasoning_tokens, total_tokens, usage_estimated, cost_usd, user_agent, endpoint)
    select request_id, created_at, k.account_id, k.key_id, k.key_name,
      case when endpoint = 'models' then '' else model end,
      case when endpoint = 'models' then null else provider end,
      case when endpoint = 'models' then null else model end,
      status, outcome,
      case when outcome = 'error' then 'upstream_error' end,
      case when outcome = 'error' then 'code_' || status end,
      case when outcome = 'error' then 'bench error' end,
      stream, latency, case when stream = 1 and outcome = 'success' then latency / 4 end,
      prompt, completion, 0, 0, prompt + completion, 0, (prompt + 4 * completion) / 1000000.0, 'bench/1.0', endpoint
    from (
      select n, request_id, created_at, key_index, model, provider, endpoint, status, outcome, stream,
        case when endpoint = 'models' then 1 + h5 % 3 else 80 + (h5 % 1000) * (h5 % 1000) / 250 end as latency,
        case when outcome = 'success' then 20 + h3 % 2000 end as prompt,
        case when outcome = 'success' and endpoint <> 'embeddings' then 5 + h4 % 800 end as completion
      from (
        select n, h3, h4, h5, ${requestId} as request_id,
          ${start} + (n * ${spanDays * day}) / ${rowCount} as created_at,
          ((h1 % 10000) * (h1 % 10000) / 1000000) * ${keysPerAccount} + h6 % ${keysPerAccount} as key_index,
          ${modelCase} as model, ${providerCase} as provider,
          case when m >= ${embeddingsFrom} then 'embeddings' when h3 % 100 < 85 then 'chat_completions'
            when h3 % 100 < 93 then 'responses' when h3 % 100 < 97 then 'messages' else 'models' end as endpoint,
          case when h4 % 1000 < 970 then 200 when h4 % 1000 < 980 then 400 when h4 % 1000 < 990 then 429
            when h4 % 1000 < 998 then 502 else 499 end as status,
          case when h4 % 1000 < 970 then 'success' when h4 % 1000 < 998 then 'error' else 'cancelled' end as outcome,
          h5 % 2 as stream
        from (
          select n, ${hash(1103515245)} as h1, ${hash(950706376)} % 100 as m, ${hash(1220703125)} as h3,
            ${hash(742938285)} as h4, ${hash(1583458089)} as h5, ${hash(784588716)} as h6
          from (${sequence}) as numbers
        ) as hashed
      ) as shaped
    ) as rows_
    join bench_keys k on k.key_index = rows_.key_index`;
}

async function seedDatabase() {
  const handle = await openDatabase(config);
  const db = handle.db;
  const secret = loadKeySecret(config.server.dataDir, undefined);
  const accounts = [];
  const keys = [];
  for (let index = 0; index < accountCount; index++) {
    const account = await createAccount(db, { name: `tenant-${String(index).padStart(3, '0')}` });
    accounts.push(account);
    for (let slot = 0; slot < keysPerAccount; slot++) {
      const created = await createKey(db, secret, {
        account: account.id,
        name: `service-${slot}`,
        environment: environments[slot],
      });
      keys.push({
        index: index * keysPerAccount + slot,
        id: created.info.id,
        accountId: account.id,
        name: `service-${slot}`,
      });
    }
  }
  const user = await createUser(db, { email: 'operator@example.com', password: 'bench password 1', admin: true });
  const { token } = await createManagementToken(db, { userId: user.id, name: 'bench' });
  await sql`create table bench_keys (key_index integer primary key, key_id text, account_id text, key_name text)`.execute(
    db,
  );
  for (const key of keys) {
    await sql`insert into bench_keys values (${key.index}, ${key.id}, ${key.accountId}, ${key.name})`.execute(db);
  }

  const end = Math.floor(Date.now() / 60_000) * 60_000 - 60_000;
  const start = end - spanDays * day;
  if (engine === 'postgres') {
    for (let at = start; at <= end + 7 * day; at += 7 * day) await ensurePartitions(db, at);
  } else {
    // The load only: a large page cache and no fsync per transaction (the server opens its own connection after).
    handle.sqlite.pragma('cache_size = -1000000');
    handle.sqlite.pragma('synchronous = OFF');
  }
  const started = performance.now();
  const chunk = 500_000;
  for (let first = 0; first < rowCount; first += chunk) {
    await sql.raw(generateSql(first, Math.min(rowCount, first + chunk), start)).execute(db);
    log(
      `inserted ${Math.min(rowCount, first + chunk).toLocaleString('en-US')} rows (${((performance.now() - started) / 1000).toFixed(0)} s)`,
    );
  }
  const insertSeconds = (performance.now() - started) / 1000;
  await sql`drop table bench_keys`.execute(db);
  if (engine === 'postgres') await sql`analyze`.execute(db);
  else handle.sqlite.pragma('wal_checkpoint(TRUNCATE)');
  await handle.close();

  // The rollups, built by the command an operator would run.
  const rebuildStarted = performance.now();
  const rebuilt = spawnSync(
    process.execPath,
    [path.join(root, 'bin', 'switchboard.js'), 'usage', 'rebuild-rollups', '--config', configFile, '--json'],
    { encoding: 'utf8', env: process.env },
  );
  if (rebuilt.status !== 0) throw new Error(`rebuild-rollups failed: ${rebuilt.stderr}`);
  const rebuildSeconds = (performance.now() - rebuildStarted) / 1000;
  const rollupRows = JSON.parse(rebuilt.stdout);
  log(`rolled up in ${rebuildSeconds.toFixed(0)} s: ${JSON.stringify(rollupRows)}`);

  const sizes = await databaseSizes();
  return { accounts, keys, token, insertSeconds, rebuildSeconds, rollupRows, sizes, start, end };
}

/** Bytes of the log (rows and indexes) and of the rollups, and of the whole database. */
async function databaseSizes() {
  const handle = await openDatabase(config);
  try {
    if (engine === 'postgres') {
      const bytes = async (query) => Number((await sql.raw(query).execute(handle.db)).rows[0].bytes);
      return {
        log: await bytes(
          `select coalesce(sum(pg_total_relation_size(inhrelid)), 0)::text as bytes from pg_inherits where inhparent = 'request_log'::regclass`,
        ),
        rollups: await bytes(
          `select coalesce(sum(pg_total_relation_size(oid)), 0)::text as bytes from pg_class where relkind = 'r' and relname like 'usage\\_%'`,
        ),
        total: await bytes('select pg_database_size(current_database())::text as bytes'),
      };
    }
    const stat = (table) =>
      Number(
        handle.sqlite
          .prepare(`select coalesce(sum(pgsize), 0) as bytes from dbstat where name = ? or tbl_name = ?`)
          .get(table, table).bytes,
      );
    let rollups = Number.NaN;
    let logBytes = Number.NaN;
    try {
      // Every rollup (usage_hourly, usage_daily and the narrower ones beside them).
      rollups = handle.sqlite
        .prepare(`select name from sqlite_schema where type = 'table' and name like 'usage\\_%' escape '\\'`)
        .all()
        .reduce((sum, { name }) => sum + stat(name), 0);
      logBytes = Number(
        handle.sqlite
          .prepare(
            `select coalesce(sum(pgsize), 0) as bytes from dbstat where name in (select name from sqlite_schema where tbl_name = 'request_log')`,
          )
          .get().bytes,
      );
    } catch {
      // dbstat is not compiled in: only the file's size is known.
    }
    return { log: logBytes, rollups, total: statSync(path.join(config.server.dataDir, 'switchboard.db')).size };
  } finally {
    await handle.close();
  }
}

async function startServer() {
  server = spawn(process.execPath, [path.join(root, 'bin', 'switchboard.js'), 'serve', '--config', configFile], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let buffered = '';
    server.stdout.on('data', (chunk) => {
      buffered += chunk;
      const match = /"url":"(http:\/\/[^"]+)"/.exec(buffered);
      if (match) resolve(match[1]);
    });
    server.on('exit', (code) => reject(new Error(`server exited with ${code}`)));
  });
}

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];

/** The server's longest event-loop stall since the previous scrape (prom-client resets it on every scrape). */
async function eventLoopMaxLag(url) {
  const text = await (await fetch(`${url}/metrics`)).text();
  return 1000 * Number(/^switchboard_process_nodejs_eventloop_lag_max_seconds (\S+)$/m.exec(text)?.[1] ?? Number.NaN);
}

/**
 * Calls /healthz every 10 ms until stopped; returns the slowest answer seen by a client (the server's stalls plus
 * everything else on a shared machine) and the server's own longest event-loop stall over the same time.
 */
function probeHealth(url) {
  let worst = 0;
  let running = true;
  const reset = eventLoopMaxLag(url);
  const loop = (async () => {
    while (running) {
      const started = performance.now();
      await (await fetch(`${url}/healthz`)).arrayBuffer();
      worst = Math.max(worst, performance.now() - started);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  })();
  return async () => {
    running = false;
    await loop;
    await reset;
    return { worst, stall: await eventLoopMaxLag(url) };
  };
}

async function measure(url, token, name, pathFor, count = requestsPerCase, withProbe = false) {
  if (only && !name.includes(only)) return undefined;
  const headers = { authorization: `Bearer ${token}` };
  const timings = [];
  const stopProbe = withProbe ? probeHealth(url) : undefined;
  let rows = 0;
  for (let index = 0; index < count + 10; index++) {
    const target = `${url}${pathFor(index)}`;
    const started = performance.now();
    const response = await fetch(target, { headers });
    const body = await response.json();
    const elapsed = performance.now() - started;
    if (response.status !== 200) throw new Error(`${name}: ${response.status} ${JSON.stringify(body)}`);
    if (index >= 10) {
      timings.push(elapsed);
      rows += body.data?.length ?? (body.requestId ? 1 : 0);
    }
  }
  timings.sort((first, second) => first - second);
  const result = {
    name,
    p50: percentile(timings, 50),
    p95: percentile(timings, 95),
    p99: percentile(timings, 99),
    rowsPerPage: rows / count,
    health: stopProbe ? await stopProbe() : undefined,
  };
  log(`${name}: p50 ${result.p50.toFixed(1)} ms, p95 ${result.p95.toFixed(1)} ms`);
  return result;
}

/** Follows nextCursor from the newest row, `pages` pages deep; returns the cursors met on the way. */
async function walk(url, token, base, pages) {
  const cursors = [];
  let cursor = null;
  for (let page = 0; page < pages; page++) {
    const response = await fetch(`${url}${base}${cursor ? `&cursor=${cursor}` : ''}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    const body = await response.json();
    if (!body.nextCursor) break;
    cursor = body.nextCursor;
    cursors.push(cursor);
  }
  return cursors;
}

async function main() {
  let seeded;
  if (reused) {
    seeded = reused;
    log(`reusing the ${rowCount.toLocaleString('en-US')} rows in ${work}`);
  } else {
    log(`generating ${rowCount.toLocaleString('en-US')} rows over ${spanDays} days for ${accountCount} accounts`);
    seeded = await seedDatabase();
    if (keep) writeFileSync(path.join(work, 'seeded.json'), JSON.stringify({ ...seeded, databaseUrl, rowCount }));
  }
  const url = await startServer();
  const { accounts, keys, token } = seeded;
  const big = accounts[0];
  const median = accounts[30];
  const bigKeys = keys.filter((key) => key.accountId === big.id);
  const logs = `/api/accounts/${big.id}/logs?limit=50`;
  const now = Date.now();
  const middle = seeded.start + 45 * day;

  // Request ids to look up: spread over the whole log.
  const lookups = Array.from(
    { length: 50 },
    (_, index) => `req_${String(Math.floor(((index + 0.5) / 50) * rowCount)).padStart(10, '0')}`,
  );
  const firstPage = [
    ['No filter', ''],
    ['Key (1 of 3)', `&key=${bigKeys[1].id}`],
    ['Model (1 of 6)', '&model=claude-sonnet'],
    ['Provider', '&provider=gemini'],
    ['Endpoint: messages (4%)', '&endpoint=messages'],
    ['Key environment', '&environment=staging'],
    ['Server errors (0.8%)', '&status=server_error'],
    ['Cancelled (0.2%)', '&status=cancelled'],
    ['Latency ≥ 3.5 s (~2%)', '&minLatencyMs=3500'],
    ['One day, 45 days back', `&from=${middle}&to=${middle + day}`],
    ['Model + client errors', '&model=gpt-4o&status=client_error'],
    ['Provider + environment + latency ≥ 2 s', '&provider=anthropic&environment=production&minLatencyMs=2000'],
    [
      'Key + model + success + one day',
      `&key=${bigKeys[2].id}&model=gpt-4o-mini&status=success&from=${middle}&to=${middle + day}`,
    ],
    ['Endpoint embeddings + cancelled', '&endpoint=embeddings&status=cancelled'],
  ];
  const logResults = [];
  for (const [name, filter] of firstPage) {
    logResults.push(await measure(url, token, `First page: ${name}`, () => `${logs}${filter}`));
  }
  for (const [name, filter] of [
    ['No filter', ''],
    ['Model + client errors', '&model=gpt-4o&status=client_error'],
    ['Cancelled (0.2%)', '&status=cancelled'],
    ['Provider + environment + latency ≥ 2 s', '&provider=anthropic&environment=production&minLatencyMs=2000'],
  ]) {
    if (only && !`Load older (pages 2-41): ${name}`.includes(only)) continue;
    const cursors = await walk(url, token, `${logs}${filter}`, 40);
    if (cursors.length === 0) continue;
    logResults.push(
      await measure(
        url,
        token,
        `Load older (pages 2-41): ${name}`,
        (index) => `${logs}${filter}&cursor=${cursors[index % cursors.length]}`,
      ),
    );
  }
  logResults.push(await measure(url, token, 'All accounts, first page: no filter', () => '/api/logs?limit=50'));
  logResults.push(
    await measure(url, token, 'All accounts, first page: cancelled', () => '/api/logs?limit=50&status=cancelled'),
  );
  logResults.push(
    await measure(
      url,
      token,
      'All accounts, first page: model + latency ≥ 3.5 s',
      () => '/api/logs?limit=50&model=gemini-flash&minLatencyMs=3500',
    ),
  );
  const lookupResults = [
    await measure(
      url,
      token,
      'Request id: all accounts (GET /api/logs/{id})',
      (index) => `/api/logs/${lookups[index % lookups.length]}`,
    ),
    await measure(
      url,
      token,
      'Request id: log filter (?requestId=)',
      (index) => `/api/logs?requestId=${lookups[index % lookups.length]}`,
    ),
  ];

  const usage = (account) => `/api/accounts/${account.id}/usage`;
  const usageCases = [
    ['Largest account: 30 days, daily', `${usage(big)}?bucket=day&from=${now - 30 * day}`],
    ['Largest account: 30 days, daily, per key', `${usage(big)}?bucket=day&groupBy=key&from=${now - 30 * day}`],
    ['Largest account: 30 days, daily, per model', `${usage(big)}?bucket=day&groupBy=model&from=${now - 30 * day}`],
    ['Largest account: 30 days, hourly', `${usage(big)}?bucket=hour&from=${now - 30 * day}`],
    ['Largest account: 30 days, hourly, per model', `${usage(big)}?bucket=hour&groupBy=model&from=${now - 30 * day}`],
    [
      'Largest account: 30 days, daily, local time (UTC-5), per endpoint',
      `${usage(big)}?bucket=day&groupBy=endpoint&tzOffsetMinutes=-300&from=${now - 30 * day}`,
    ],
    ['Largest account: 90 days, daily', `${usage(big)}?bucket=day&from=${now - 90 * day}`],
    ['Largest account: 90 days, daily, per key', `${usage(big)}?bucket=day&groupBy=key&from=${now - 90 * day}`],
    ['Largest account: 90 days, daily, per model', `${usage(big)}?bucket=day&groupBy=model&from=${now - 90 * day}`],
    [
      'Largest account: 90 days, daily, local time (UTC-5), per model',
      `${usage(big)}?bucket=day&groupBy=model&tzOffsetMinutes=-300&from=${now - 90 * day}`,
    ],
    ['Median account: 90 days, daily, per model', `${usage(median)}?bucket=day&groupBy=model&from=${now - 90 * day}`],
    ['Keys page: 30-day spend per key', `/api/accounts/${big.id}/usage/keys`],
    ['Budgets with current spend', `/api/accounts/${big.id}/budgets`],
    ['Operator: spend per account, 30 days', '/api/usage/accounts?days=30'],
    ['Operator: spend per account, 90 days', '/api/usage/accounts?days=90'],
    [
      'Operator: all accounts, 90 days, daily, per account',
      `/api/usage?bucket=day&groupBy=account&from=${now - 90 * day}`,
    ],
    ['Operator: all accounts, 30 days, daily, per model', `/api/usage?bucket=day&groupBy=model&from=${now - 30 * day}`],
    ['Operator: all accounts, 30 days, hourly', `/api/usage?bucket=hour&from=${now - 30 * day}`],
  ];
  const usageResults = [];
  for (const [name, target] of usageCases)
    usageResults.push(await measure(url, token, name, () => target, requestsPerCase, true));

  const rss = (() => {
    try {
      return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${server.pid}/status`, 'utf8'))?.[1]) / 1024;
    } catch {
      return Number.NaN;
    }
  })();
  server.kill('SIGTERM');
  await dropDatabase?.();
  const measured = (results) => results.filter(Boolean);
  if (only) {
    process.stdout.write(`${JSON.stringify(measured([...logResults, ...lookupResults, ...usageResults]))}\n`);
    return;
  }
  writeSection(seeded, {
    logResults: measured(logResults),
    lookupResults: measured(lookupResults),
    usageResults: measured(usageResults),
    rss,
  });
}

function writeSection(seeded, { logResults, lookupResults, usageResults, rss }) {
  const cpu = cpus()[0]?.model.replace(/\s+/g, ' ').trim() ?? 'unknown CPU';
  // Tables padded the way the repository's formatter (biome) writes Markdown, so the file stays lint-clean.
  const markdownTable = (header, rows) => {
    const widths = header.map((cell, column) => Math.max(cell.length, 3, ...rows.map((row) => row[column].length)));
    const line = (cells) => `| ${cells.map((cell, column) => cell.padEnd(widths[column])).join(' | ')} |`;
    return [line(header), line(widths.map((width) => '-'.repeat(width))), ...rows.map(line)].join('\n');
  };
  const ms = (value) => `${value.toFixed(1)} ms`;
  const verdict = (value, target) => (value <= target ? `**${ms(value)}**` : `**${ms(value)}** (over ${target} ms)`);
  const table = (rows, target) =>
    markdownTable(
      ['Request', 'p50', 'p95', 'p99', 'Rows'],
      rows.map((row) => [
        row.name,
        ms(row.p50),
        verdict(row.p95, target),
        ms(row.p99),
        String(Math.round(row.rowsPerPage)),
      ]),
    );
  const perMillion = (bytes) => `${(((bytes / rowCount) * 1e6) / 1e6).toFixed(0)} MB`;
  const engineName = engine === 'postgres' ? 'PostgreSQL' : 'SQLite (WAL)';
  const worst = (rows) => Math.max(...rows.map((row) => row.p95));
  const marker = `console-log-${engine}`;
  const section = `<!-- BEGIN ${marker} -->
### ${engineName}: 10 million log rows

Measured by \`npm run bench:console -- --engine ${engine}\` on ${new Date().toISOString().slice(0, 10)}: ${cpus().length} × ${cpu}, Node ${process.version}.
${rowCount.toLocaleString('en-US')} rows over ${spanDays} days, ${accountCount} accounts (the largest holds ~10% of the rows, the median ~0.6%),
${seeded.keys.length} keys, ${models.length} models on 4 providers, 5 endpoints; 97% success, 2% 4xx, 0.8% 5xx, 0.2% cancelled. Inserted in
${seeded.insertSeconds.toFixed(0)} s by SQL on the database itself (every index of the log maintained); \`switchboard usage rebuild-rollups\` then
took ${seeded.rebuildSeconds.toFixed(0)} s (${seeded.rollupRows.hourlyRows.toLocaleString('en-US')} hourly and ${seeded.rollupRows.dailyRows.toLocaleString('en-US')} daily rollup rows).

Size: database ${(seeded.sizes.total / 1e9).toFixed(2)} GB, **${perMillion(seeded.sizes.total)} per million rows**${
    Number.isFinite(seeded.sizes.log)
      ? ` (the log with its indexes ${perMillion(seeded.sizes.log)} per million, the rollups ${(seeded.sizes.rollups / 1e6).toFixed(0)} MB in all)`
      : ''
  }.

The server runs in its own process; a client calls the management API with an operator's token, one request at a time,
${requestsPerCase} measured requests per row after 10 warm-up ones; times are the client's, request to parsed JSON. Account filters are
on the largest account (~1M rows).

Usage (target p95 ≤ 100 ms; the last columns: the server's longest event-loop stall, and the slowest \`/healthz\` of a
probe every 10 ms, meanwhile):

${markdownTable(
  ['Request', 'p50', 'p95', 'p99', 'Event-loop stall', 'Slowest /healthz'],
  usageResults.map((row) => [
    row.name,
    ms(row.p50),
    verdict(row.p95, 100),
    ms(row.p99),
    ms(row.health.stall),
    ms(row.health.worst),
  ]),
)}

Request log, pages of 50 (target p95 ≤ 100 ms):

${table(logResults, 100)}

Lookup by request id (target p95 ≤ 20 ms):

${table(lookupResults, 20)}

Worst p95: usage ${worst(usageResults).toFixed(1)} ms, log ${worst(logResults).toFixed(1)} ms, lookup ${worst(lookupResults).toFixed(1)} ms. Server RSS after the runs:
${rss.toFixed(0)} MB; load average ${loadavg()[0]?.toFixed(1)} at the end (2 cores shared with other work).
<!-- END ${marker} -->`;
  const file = path.join(root, 'docs', 'benchmarks.md');
  const current = readFileSync(file, 'utf8');
  const begin = current.indexOf(`<!-- BEGIN ${marker} -->`);
  const endMarker = `<!-- END ${marker} -->`;
  const end = current.indexOf(endMarker);
  const updated =
    begin !== -1 && end > begin
      ? `${current.slice(0, begin)}${section}${current.slice(end + endMarker.length)}`
      : `${current.replace(/\s*$/, '\n')}\n${section}\n`;
  writeFileSync(file, updated);
  log('wrote its section of docs/benchmarks.md');
  process.stdout.write(`${JSON.stringify({ logResults, lookupResults, usageResults })}\n`);
}

main()
  .then(() => process.exit(0))
  .catch(async (error) => {
    log(error.stack ?? String(error));
    await dropDatabase?.().catch(() => {});
    process.exit(1);
  });
