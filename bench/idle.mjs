// node bench/idle.mjs: what an idle gateway costs. Starts Switchboard as installed (bin/switchboard, one worker),
// serves a little traffic, lets it settle, then watches it for a window with no traffic at all and reports
// - CPU: % of one core over the window, per thread (the event loop, the SQLite thread, the rest), from
//   /proc/<pid>/task/*/stat, and the event loop's wake-ups per second (voluntary context switches of the main thread);
// - database writes: on SQLite, whether the database and -wal files changed (size, mtime) and how many commits other
//   connections saw (`data_version` read from a connection of this script); on PostgreSQL (--postgres), the gateway
//   database's transactions and rows inserted, updated or deleted (pg_stat_database, in a database of its own);
// - Redis (--redis): the commands the gateway sent (a private redis-server, so nobody else's commands count).
//   node bench/idle.mjs [--seconds 60] [--settle 30] [--postgres <admin url> [--log-statements]] [--redis] [--root <dir>]
// --root measures another checkout's build (e.g. the previous commit in a worktree) with this script.
import { execFileSync } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { configureGateway, startGateway } from './gateway.mjs';
import { benchWorkspace } from './process-tools.mjs';

const here = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const option = (name, fallback) => {
  const index = process.argv.indexOf(name);
  return index === -1 ? fallback : process.argv[index + 1];
};
const root = path.resolve(option('--root', here));
const seconds = Number(option('--seconds', 60));
const settleSeconds = Number(option('--settle', 30));
const postgresAdminUrl = option('--postgres', undefined);
const withRedis = process.argv.includes('--redis');
const require = createRequire(path.join(here, 'package.json'));

const { children, spawnTracked, work } = benchWorkspace('switchboard-idle-');
const cleanups = [];
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const log = (message) => process.stderr.write(`[idle] ${message}\n`);

function listening(child, pattern) {
  return new Promise((resolve, reject) => {
    let buffered = '';
    child.stdout.on('data', (data) => {
      buffered += data;
      const match = pattern.exec(buffered);
      if (match) resolve(match);
    });
    child.on('exit', (code) => reject(new Error(`a process exited with ${code} before it listened`)));
  });
}

/** Per-thread CPU ticks (utime + stime, 100 per second) and the main thread's voluntary context switches. */
function threadTicks(pid) {
  const threads = new Map();
  for (const tid of execFileSync('ls', [`/proc/${pid}/task`], { encoding: 'utf8' })
    .split('\n')
    .filter(Boolean)) {
    try {
      const fields = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8').split(') ')[1].split(' ');
      threads.set(tid, Number(fields[11]) + Number(fields[12]));
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  const status = readFileSync(`/proc/${pid}/task/${pid}/status`, 'utf8');
  const wakeups = Number(/voluntary_ctxt_switches:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return { threads, wakeups };
}

/** The SQLite thread's id: the thread whose CPU grows while the request log is written (found during the traffic). */
function busiestOtherThread(before, after, pid) {
  let best;
  for (const [tid, ticks] of after.threads) {
    if (tid === String(pid)) continue;
    const grown = ticks - (before.threads.get(tid) ?? 0);
    if (best === undefined || grown > best.grown) best = { tid, grown };
  }
  return best?.tid;
}

function fileState(file) {
  try {
    const stat = statSync(file);
    return `${stat.size}@${stat.mtimeMs}`;
  } catch {
    return 'absent';
  }
}

async function main() {
  const mock = spawnTracked(process.execPath, [path.join(here, 'bench/mock-upstream.mjs'), '0']);
  const mockPort = Number((await listening(mock, /"port":(\d+)/))[1]);

  let databaseUrl;
  let pgAdmin;
  let databaseName;
  if (postgresAdminUrl) {
    const pg = require('pg');
    pgAdmin = new pg.Client({ connectionString: postgresAdminUrl });
    await pgAdmin.connect();
    databaseName = `switchboard_idle_${process.pid}`;
    await pgAdmin.query(`create database ${databaseName}`);
    // To see which statements an idle gateway sends: PostgreSQL then logs each one (in its server log).
    if (process.argv.includes('--log-statements'))
      await pgAdmin.query(`alter database ${databaseName} set log_statement = 'all'`);
    cleanups.push(async () => {
      await pgAdmin.query(`drop database if exists ${databaseName} with (force)`);
      await pgAdmin.end();
    });
    const url = new URL(postgresAdminUrl);
    url.pathname = `/${databaseName}`;
    databaseUrl = url.toString();
  }
  let redisPort;
  if (withRedis) {
    redisPort = 22_000 + Math.floor(Math.random() * 2000);
    const redis = spawnTracked('redis-server', [
      '--port',
      String(redisPort),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      'no',
    ]);
    await listening(redis, /Ready to accept connections/);
  }
  const redisCommands = () =>
    Number(
      /total_commands_processed:(\d+)/.exec(
        execFileSync('redis-cli', ['-p', String(redisPort), 'info', 'stats'], { encoding: 'utf8' }),
      )?.[1],
    );

  const dataDir = path.join(work, 'data');
  const gatewayPort = 24_000 + Math.floor(Math.random() * 2000);
  const file = path.join(work, 'switchboard.yaml');
  const key = configureGateway({
    root,
    file,
    port: gatewayPort,
    dataDir,
    databaseUrl,
    redisUrl: redisPort ? `redis://127.0.0.1:${redisPort}` : undefined,
    providers: ['  - name: mock', '    type: openai', `    base_url: http://127.0.0.1:${mockPort}/v1`],
    models: ['  - name: mock', '    provider: mock'],
    account: 'idle',
  });
  const { child: gateway } = await startGateway({ root, file, children });
  const pid = gateway.pid;

  // A little traffic first (an idle gateway has usually served some), which also shows which thread writes the log.
  const beforeTraffic = threadTicks(pid);
  const body = JSON.stringify({ model: 'mock', messages: [{ role: 'user', content: 'Hello!' }] });
  for (let index = 0; index < 300; index++) {
    const response = await fetch(`http://127.0.0.1:${gatewayPort}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body,
    });
    await response.arrayBuffer();
    if (!response.ok) throw new Error(`the gateway answered ${response.status}`);
  }
  const sqliteThread = databaseUrl ? undefined : busiestOtherThread(beforeTraffic, threadTicks(pid), pid);
  log(`served 300 requests; settling for ${settleSeconds} s, then watching for ${seconds} s`);
  await sleep(settleSeconds * 1000);

  let sqliteReader;
  const sqliteFiles = ['switchboard.db', 'switchboard.db-wal'].map((name) => path.join(dataDir, name));
  if (!databaseUrl) {
    const Sqlite = require('better-sqlite3');
    sqliteReader = new Sqlite(sqliteFiles[0], { readonly: true, fileMustExist: true });
  }
  const dataVersion = () => Number(sqliteReader.pragma('data_version', { simple: true }));
  const pgStats = async () => {
    const { rows } = await pgAdmin.query(
      'select xact_commit + xact_rollback as transactions, tup_inserted + tup_updated + tup_deleted as written from pg_stat_database where datname = $1',
      [databaseName],
    );
    return { transactions: Number(rows[0].transactions), written: Number(rows[0].written) };
  };

  const start = {
    ticks: threadTicks(pid),
    files: sqliteReader ? sqliteFiles.map(fileState) : [],
    dataVersion: sqliteReader ? dataVersion() : 0,
    pg: pgAdmin ? await pgStats() : undefined,
    redis: redisPort ? redisCommands() : 0,
    at: Date.now(),
  };
  await sleep(seconds * 1000);
  const end = {
    ticks: threadTicks(pid),
    files: sqliteReader ? sqliteFiles.map(fileState) : [],
    dataVersion: sqliteReader ? dataVersion() : 0,
    redis: redisPort ? redisCommands() : 0,
    at: Date.now(),
  };
  // PostgreSQL's backends report their statistics up to ~10 s late when idle: wait that out, and say so.
  if (pgAdmin) await sleep(11_000);
  end.pg = pgAdmin ? await pgStats() : undefined;

  const elapsed = (end.at - start.at) / 1000;
  const percent = (ticks) => ticks / elapsed; // 100 ticks per second = 100% of a core
  const grown = (tid) => (end.ticks.threads.get(tid) ?? 0) - (start.ticks.threads.get(tid) ?? 0);
  const all = [...end.ticks.threads.keys()].reduce((sum, tid) => sum + grown(tid), 0);
  const main = grown(String(pid));
  const sqlite = sqliteThread ? grown(sqliteThread) : 0;
  const result = {
    database: databaseUrl ? 'postgres' : 'sqlite',
    redis: Boolean(redisPort),
    seconds: Math.round(elapsed),
    cpuPercent: Number(percent(all).toFixed(3)),
    mainThreadPercent: Number(percent(main).toFixed(3)),
    sqliteThreadPercent: sqliteThread ? Number(percent(sqlite).toFixed(3)) : undefined,
    otherThreadsPercent: Number(percent(all - main - sqlite).toFixed(3)),
    eventLoopWakeupsPerSecond: Number(((end.ticks.wakeups - start.ticks.wakeups) / elapsed).toFixed(1)),
    ...(sqliteReader
      ? {
          sqliteFilesChanged: sqliteFiles
            .filter((_file, index) => start.files[index] !== end.files[index])
            .map((file) => path.basename(file)),
          sqliteCommitsSeen: end.dataVersion - start.dataVersion,
        }
      : {}),
    ...(pgAdmin
      ? {
          postgresTransactions: end.pg.transactions - start.pg.transactions,
          postgresRowsWritten: end.pg.written - start.pg.written,
          postgresWindowSeconds: Math.round(elapsed + 11),
        }
      : {}),
    // INFO itself is one command; the two the script sent are not counted.
    ...(redisPort ? { redisCommands: end.redis - start.redis - 1 } : {}),
  };
  sqliteReader?.close();
  gateway.kill('SIGTERM');
  await new Promise((resolve) => gateway.once('exit', resolve));
  for (const cleanup of cleanups) await cleanup();
  log(
    `${result.database}${result.redis ? ' + Redis' : ''}, ${result.seconds} s idle: ${result.cpuPercent}% of a core (event loop ${result.mainThreadPercent}%, ${result.eventLoopWakeupsPerSecond} wake-ups/s)`,
  );
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

main()
  .then(() => process.exit(0))
  .catch((error) => {
    log(error.stack ?? String(error));
    process.exit(1);
  });
