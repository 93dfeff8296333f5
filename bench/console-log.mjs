// The console's request log at scale: seeds one account with 1,000,000 request-log rows (plus 200,000 for another
// account sharing the table), starts the real server in its own process, and measures the log API the console
// calls: first page, filtered pages, and deep keyset pages. Also measures the usage API over the same rows.
// Writes its section of docs/benchmarks.md (between the console-log markers) and nothing else of that file.
// Usage: npm run bench:console [-- --rows 1000000 --requests 200]
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createAccount } from '../dist/accounts/service.js';
import { parseConfig } from '../dist/config/loader.js';
import { openDatabase } from '../dist/db/connect.js';
import { loadKeySecret } from '../dist/keys/secret.js';
import { createKey } from '../dist/keys/service.js';
import { RowBatch } from '../dist/request-log/row-batch.js';
import { createSqliteBatchWriter } from '../dist/request-log/sqlite-batch-writer.js';
import { RequestIds } from '../dist/server/request-id.js';
import { createManagementToken } from '../dist/users/management-tokens.js';
import { addMember, createUser } from '../dist/users/service.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const argument = (name, fallback) => {
  const index = process.argv.indexOf(`--${name}`);
  return index === -1 ? fallback : Number(process.argv[index + 1]);
};
const rowCount = argument('rows', 1_000_000);
const otherRows = Math.round(rowCount / 5);
const requestsPerCase = argument('requests', 200);
const log = (message) => process.stderr.write(`[bench:console] ${message}\n`);
const work = mkdtempSync(path.join(tmpdir(), 'switchboard-console-bench-'));
let server;
const keep = process.argv.includes('--keep');
process.on('exit', () => {
  server?.kill('SIGTERM');
  if (keep) log(`kept ${work}`);
  else rmSync(work, { recursive: true, force: true });
});
process.on('SIGINT', () => process.exit(130));

const models = ['gpt-4o-mini', 'gpt-4o', 'claude-sonnet', 'gemini-flash', 'llama3.2'];
const rawConfig = {
  server: { host: '127.0.0.1', port: 0, data_dir: path.join(work, 'data') },
  logging: { level: 'info' },
  providers: [{ name: 'upstream', type: 'openai', base_url: 'http://127.0.0.1:9/v1' }],
  models: models.map((name) => ({ name, provider: 'upstream', pricing: { input: 1, output: 4 } })),
};
const configFile = path.join(work, 'switchboard.json.yaml');
writeFileSync(configFile, JSON.stringify(rawConfig));
const config = parseConfig(rawConfig, 'bench');

// A small deterministic generator, so every run seeds the same rows.
let seed = 42;
const random = () => {
  seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
  return seed / 2_147_483_648;
};

async function seedDatabase() {
  const handle = await openDatabase(config);
  const db = handle.db;
  const secret = loadKeySecret(config.server.dataDir, undefined);
  const bench = await createAccount(db, { name: 'bench' });
  const other = await createAccount(db, { name: 'other' });
  const keys = [];
  for (let index = 0; index < 20; index++) {
    const created = await createKey(db, secret, { account: bench.id, name: `service-${index}` });
    keys.push(created.info);
  }
  const otherKey = (await createKey(db, secret, { account: other.id, name: 'other' })).info;
  const user = await createUser(db, { email: 'bench@example.com', password: 'bench password 1' });
  await addMember(db, bench.id, user.id, 'member');
  const { token } = await createManagementToken(db, { userId: user.id, name: 'bench' });

  // The gateway's own batch and SQLite writer, so the seeded rows are exactly what the server would insert.
  const writeBatch = createSqliteBatchWriter(handle.sqlite);
  const span = 30 * 86_400_000;
  const end = Date.now() - 60_000;
  const start = end - span;
  const requestIds = new RequestIds();
  const rowFor = (index, total, account, key) => {
    const createdAt = Math.floor(start + (index / total) * span);
    const roll = random();
    // 97% success, 2% client errors, 0.8% upstream errors, 0.2% cancelled.
    const [status, outcome] =
      roll < 0.97
        ? [200, 'success']
        : roll < 0.99
          ? [random() < 0.5 ? 400 : 429, 'error']
          : roll < 0.998
            ? [502, 'error']
            : [499, 'cancelled'];
    const success = outcome === 'success';
    const prompt = success ? 20 + Math.floor(random() * 2000) : null;
    const completion = success ? 5 + Math.floor(random() * 800) : null;
    const stream = random() < 0.6 ? 1 : 0;
    const latency = Math.round(80 + -Math.log(1 - random()) * 900);
    return {
      request_id: requestIds.next(createdAt),
      created_at: createdAt,
      account_id: account.id,
      key_id: key.id,
      key_name: key.name,
      model: models[Math.floor(random() * models.length)],
      provider: 'upstream',
      upstream_model: 'upstream-model',
      status,
      outcome,
      error_type: success ? null : 'server_error',
      error_code: success ? null : `code_${status}`,
      error_message: success ? null : 'benchmark error',
      stream,
      latency_ms: latency,
      ttft_ms: stream && success ? Math.round(latency / 4) : null,
      prompt_tokens: prompt,
      completion_tokens: completion,
      cached_tokens: 0,
      reasoning_tokens: 0,
      total_tokens: success ? prompt + completion : null,
      usage_estimated: 0,
      cost_usd: success ? (prompt + 4 * completion) / 1e6 : null,
      user_agent: 'bench/1.0',
    };
  };
  const insertMany = (rows) => writeBatch(RowBatch.of(rows).message());
  const started = performance.now();
  const batch = 20_000;
  for (let offset = 0; offset < rowCount; offset += batch) {
    const rows = [];
    for (let index = offset; index < Math.min(rowCount, offset + batch); index++) {
      rows.push(rowFor(index, rowCount, bench, keys[Math.floor(random() * keys.length)]));
    }
    insertMany(rows);
    if ((offset / batch) % 10 === 0) log(`seeded ${offset + rows.length} of ${rowCount} rows`);
  }
  for (let offset = 0; offset < otherRows; offset += batch) {
    const rows = [];
    for (let index = offset; index < Math.min(otherRows, offset + batch); index++)
      rows.push(rowFor(index, otherRows, other, otherKey));
    insertMany(rows);
  }
  const seedSeconds = (performance.now() - started) / 1000;
  const fileBytes = handle.sqlite
    .prepare('select page_count * page_size as bytes from pragma_page_count(), pragma_page_size()')
    .get().bytes;
  const oldest = handle.sqlite
    .prepare(
      'select created_at, id from request_log where account_id = ? order by created_at asc, id asc limit 1 offset 1000',
    )
    .get(bench.id);
  await handle.close();
  return { bench, keys, token, seedSeconds, fileBytes, oldest, start, end };
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
      rows += body.data?.length ?? 0;
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
  log(`seeding ${rowCount} rows for one account and ${otherRows} for another`);
  const seeded = await seedDatabase();
  log(`seeded in ${seeded.seedSeconds.toFixed(1)} s; database ${(seeded.fileBytes / 1e6).toFixed(0)} MB`);
  const url = await startServer();
  const { bench, keys, token } = seeded;
  const logs = `/api/accounts/${bench.id}/logs`;
  const day = 86_400_000;
  const middle = seeded.start + 15 * day;
  const deepCursor = Buffer.from(`${seeded.oldest.created_at}.${seeded.oldest.id}`).toString('base64url');
  const walked = await walk(url, token, `${logs}?limit=50`, 200);
  const keyWalked = await walk(url, token, `${logs}?limit=50&key=${keys[3].id}`, 100);
  const results = [];
  results.push(await measure(url, token, 'First page (newest 50)', () => `${logs}?limit=50`));
  results.push(
    await measure(
      url,
      token,
      'Filter: one key of 20',
      (index) => `${logs}?limit=50&key=${keys[index % keys.length].id}`,
    ),
  );
  results.push(
    await measure(
      url,
      token,
      'Filter: one model of 5',
      (index) => `${logs}?limit=50&model=${models[index % models.length]}`,
    ),
  );
  results.push(await measure(url, token, 'Filter: errors (2.8% of rows)', () => `${logs}?limit=50&status=error`));
  results.push(await measure(url, token, 'Filter: server errors (0.8%)', () => `${logs}?limit=50&status=server_error`));
  results.push(await measure(url, token, 'Filter: cancelled (0.2%)', () => `${logs}?limit=50&status=cancelled`));
  results.push(
    await measure(
      url,
      token,
      'Filter: one day, 15 days back',
      () => `${logs}?limit=50&from=${middle}&to=${middle + day}`,
    ),
  );
  results.push(
    await measure(
      url,
      token,
      'Filter: key + model + success + one day',
      (index) =>
        `${logs}?limit=50&key=${keys[index % keys.length].id}&model=gpt-4o&status=success&from=${middle}&to=${middle + day}`,
    ),
  );
  results.push(
    await measure(
      url,
      token,
      'Keyset pages 1-200 (to row 10,000)',
      (index) => `${logs}?limit=50&cursor=${walked[index % walked.length]}`,
    ),
  );
  results.push(
    await measure(url, token, 'Keyset page at row ~999,000 (oldest)', () => `${logs}?limit=50&cursor=${deepCursor}`),
  );
  results.push(
    await measure(
      url,
      token,
      'Keyset pages 1-100 of one key',
      (index) => `${logs}?limit=50&key=${keys[3].id}&cursor=${keyWalked[index % keyWalked.length]}`,
    ),
  );
  results.push(
    await measure(
      url,
      token,
      'Deep page, errors only, 20 days back',
      () => `${logs}?limit=50&status=error&to=${seeded.end - 20 * day}`,
    ),
  );
  const usage = `/api/accounts/${bench.id}/usage`;
  const usageResults = [];
  const usageCount = Math.max(10, Math.round(requestsPerCase / 10));
  usageResults.push(
    await measure(url, token, 'Usage: last 24 h, hourly (~33k rows)', () => `${usage}?bucket=hour`, usageCount, true),
  );
  usageResults.push(
    await measure(
      url,
      token,
      'Usage: last 7 days, hourly, per key (~233k rows)',
      () => `${usage}?bucket=hour&groupBy=key&from=${Date.now() - 7 * day}`,
      usageCount,
      true,
    ),
  );
  usageResults.push(
    await measure(
      url,
      token,
      'Usage: last 30 days, daily, per model (1M rows)',
      () => `${usage}?bucket=day&groupBy=model&from=${Date.now() - 30 * day}`,
      usageCount,
      true,
    ),
  );
  const rss = await (async () => {
    try {
      return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${server.pid}/status`, 'utf8'))?.[1]) / 1024;
    } catch {
      return Number.NaN;
    }
  })();

  const cpu = cpus()[0]?.model.replace(/\s+/g, ' ').trim() ?? 'unknown CPU';
  // Tables padded the way the repository's formatter (biome) writes Markdown, so the file stays lint-clean.
  const markdownTable = (header, rows) => {
    const widths = header.map((cell, column) => Math.max(cell.length, 3, ...rows.map((row) => row[column].length)));
    const line = (cells) => `| ${cells.map((cell, column) => cell.padEnd(widths[column])).join(' | ')} |`;
    return [line(header), line(widths.map((width) => '-'.repeat(width))), ...rows.map(line)].join('\n');
  };
  const ms = (value) => `${value.toFixed(1)} ms`;
  const table = (rows) =>
    markdownTable(
      ['Request', 'p50', 'p95', 'p99'],
      rows.map((row) => [row.name, ms(row.p50), `**${ms(row.p95)}**`, ms(row.p99)]),
    );
  const worst = Math.max(...results.map((row) => row.p95));
  const section = `<!-- BEGIN console-log -->
## Console request log at 1,000,000 rows

Measured by \`npm run bench:console\` on ${new Date().toISOString().slice(0, 10)}, on this machine: ${cpus().length} × ${cpu},
Node ${process.version}, SQLite (WAL) as shipped. One account holds ${rowCount.toLocaleString('en-US')} request-log rows over 30 days
(20 keys, 5 models, 97% success, 2% 4xx, 0.8% 5xx, 0.2% cancelled) and another account ${otherRows.toLocaleString('en-US')} more in the
same table; seeding took ${seeded.seedSeconds.toFixed(0)} s and the database file is ${(seeded.fileBytes / 1e6).toFixed(0)} MB. The server runs in its own
process; a client calls the log API with a management token, one request at a time, ${requestsPerCase} measured requests per row
(after 10 warm-up requests), each returning a page of 50. Times are the client's, request to parsed JSON.

${table(results)}

**Worst p95 of the log API: ${worst.toFixed(1)} ms.** Every filter is an equality that leads an
\`(account_id, X, created_at, id)\` index and the cursor is a range on \`created_at\`, so a page costs an index seek plus
the rows it returns, wherever it is in the log: the oldest page is as fast as the newest.

The usage API aggregates the same rows (${usageCount} measured requests each):

${markdownTable(
  ['Request', 'p50', 'p95', 'p99', 'Longest event-loop stall', 'Slowest /healthz meanwhile'],
  usageResults.map((row) => [
    row.name,
    ms(row.p50),
    `**${ms(row.p95)}**`,
    ms(row.p99),
    ms(row.health.stall),
    ms(row.health.worst),
  ]),
)}

The usage API reads every log row in the range once (one GROUP BY per time slice; exact nearest-rank percentiles from
the grouped latencies), so its time grows with the rows in the range, not with the size of the log. It reads in
slices that yield to the event loop, so the data plane keeps serving meanwhile: the columns give the server's longest
event-loop stall while the usage requests ran (\`nodejs_eventloop_lag_max_seconds\` from \`/metrics\`) and the slowest
\`GET /healthz\` of a probe hitting the server every 10 ms meanwhile, which also includes the machine's other load
(its 2 cores were shared with other work; load average ${loadavg()[0]?.toFixed(1)} at the end). Server RSS after the
runs: ${rss.toFixed(0)} MB.
<!-- END console-log -->`;
  const file = path.join(root, 'docs', 'benchmarks.md');
  const current = readFileSync(file, 'utf8');
  const begin = current.indexOf('<!-- BEGIN console-log -->');
  const endMarker = '<!-- END console-log -->';
  const end = current.indexOf(endMarker);
  const updated =
    begin !== -1 && end > begin
      ? `${current.slice(0, begin)}${section}${current.slice(end + endMarker.length)}`
      : `${current.replace(/\s*$/, '\n')}\n${section}\n`;
  writeFileSync(file, updated);
  log('wrote the console-log section of docs/benchmarks.md');
  process.stdout.write(`${JSON.stringify({ results, usageResults, worstP95: worst })}\n`);
}

main()
  .then(() => process.exit(0))
  .catch((error) => {
    log(error.stack ?? String(error));
    process.exit(1);
  });
