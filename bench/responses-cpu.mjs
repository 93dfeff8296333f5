// bench/run.sh --responses: the gateway CPU a translated /v1/responses call costs next to the same chat completion
// (issue 23's target: at most ~1.15×), stored (the default) and with store: false. One mock upstream
// (bench/mock-upstream.mjs, CPU 1) answers every call with the same 1.4 KB completion; one Switchboard as shipped
// (launcher, a real key, request log on) per --root (this checkout when none; all on CPU 0), so that two builds are
// measured in the same run. Per round, the arms run one after another in alternating order, each at a fixed open-loop
// rate on every build at once; CPU is every thread's, from /proc/<pid>/task/*/schedstat (bench/fixed-rate.mjs). The
// ratio is taken per round (responses over the chat window of the same round and build), then its median.
// With --concurrency C, each window is a closed loop of C requests in flight instead (saturation: the per-request
// costs that batch, such as the stored responses' writes, are then shared by more requests).
// With --postgres <admin url>, each build stores into a database of its own created there (dropped at the end)
// instead of SQLite; the server's CPU is not counted, only the gateway's. With --threads, each window's CPU per request
// is also logged by thread: the event loop, the newest thread (on SQLite its worker, which writes the log and the
// stored responses) and the others together (V8's: garbage collection, compilation).
//   node bench/responses-cpu.mjs [--rounds N] [--seconds S] [--rate R | --concurrency C] [--postgres <admin url>]
//     [--threads] [--root <dir> ...]
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Agent, request } from 'undici';
import { cpuAtRate, cpuNanosOf } from './fixed-rate.mjs';
import { configureGateway, startGateway } from './gateway.mjs';
import { benchWorkspace, listening, median } from './process-tools.mjs';

const here = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const option = (name, fallback) => {
  const index = process.argv.indexOf(name);
  return index === -1 ? fallback : Number(process.argv[index + 1]);
};
const rounds = option('--rounds', 6);
const seconds = option('--seconds', 4);
const rate = option('--rate', 300);
// --concurrency C: closed loop at saturation instead (C requests always in flight), as bench:quick measures.
const concurrency = option('--concurrency', 0);
/** Past the stored responses' flush interval (1 s) and the checkpoint that follows a write. */
const settleMs = option('--settle', 2500);
const postgresAdminUrl = process.argv[process.argv.indexOf('--postgres') + 1];
const usePostgres = process.argv.includes('--postgres');
const byThread = process.argv.includes('--threads');
const roots = process.argv.flatMap((value, index) =>
  process.argv[index - 1] === '--root' ? [path.resolve(value)] : [],
);
if (roots.length === 0) roots.push(here);
const { children, spawnTracked, work } = benchWorkspace('switchboard-bench-responses-');
/** Databases created for the builds (--postgres), dropped when the run ends. */
const databases = [];

/** CPU nanoseconds of each thread of `pid`, by thread id. */
function threadNanosOf(pid) {
  const threads = new Map();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      threads.set(Number(tid), Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]));
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return threads;
}

/** `after` over `before` in µs per request: the event loop, the newest thread, the others. */
function threadSplit(pid, before, after, requests) {
  const micros = (tid) => ((after.get(tid) ?? 0) - (before.get(tid) ?? 0)) / 1000 / requests;
  const newest = Math.max(...after.keys());
  let others = 0;
  for (const tid of after.keys()) if (tid !== pid && tid !== newest) others += micros(tid);
  return { loop: micros(pid), newest: micros(newest), others };
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const log = (message) => process.stderr.write(`[bench:responses] ${message}\n`);

const input = 'Hello! '.repeat(120);
const arms = [
  { name: 'chat', path: '/v1/chat/completions', body: { model: 'mock', messages: [{ role: 'user', content: input }] } },
  { name: 'responses, store: false', path: '/v1/responses', body: { model: 'mock', input, store: false } },
  { name: 'responses, store: true', path: '/v1/responses', body: { model: 'mock', input } },
];

/** CPU microseconds of `pid` per request with `concurrency` requests in flight for `seconds` (closed loop). */
async function cpuAtSaturation({ url, headers, body, pid, seconds: windowSeconds }) {
  const dispatcher = new Agent({ connections: concurrency, keepAliveTimeout: 60_000 });
  const before = cpuNanosOf(pid);
  const end = performance.now() + windowSeconds * 1000;
  let sent = 0;
  let failed = 0;
  const worker = async () => {
    while (performance.now() < end) {
      sent++;
      const response = await request(url, {
        method: 'POST',
        dispatcher,
        headers: { 'content-type': 'application/json', ...headers },
        body,
      });
      await response.body.dump();
      if (response.statusCode !== 200) failed++;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const after = cpuNanosOf(pid);
  await dispatcher.close();
  return { total: (after.total - before.total) / 1000 / sent, sent, failed };
}

/** A fresh database for one build on the --postgres server; its URL. */
async function createDatabase(pg, index) {
  const name = `switchboard_bench_responses_${process.pid}_${index}`;
  const admin = new pg.Client({ connectionString: postgresAdminUrl });
  await admin.connect();
  try {
    await admin.query(`create database ${name}`);
  } finally {
    await admin.end();
  }
  databases.push(name);
  const url = new URL(postgresAdminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

async function storedResponses(pg, name) {
  const url = new URL(postgresAdminUrl);
  url.pathname = `/${name}`;
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  try {
    return Number((await client.query('select count(*) as count from responses')).rows[0].count);
  } finally {
    await client.end();
  }
}

async function dropDatabases(pg) {
  const admin = new pg.Client({ connectionString: postgresAdminUrl });
  await admin.connect();
  try {
    for (const name of databases) await admin.query(`drop database if exists ${name} with (force)`);
  } finally {
    await admin.end();
  }
}

async function startBuild(root, index, upstream, databaseUrl) {
  const dataDir = path.join(work, `data-${index}`);
  mkdirSync(dataDir);
  const file = path.join(work, `switchboard-${index}.yaml`);
  const key = configureGateway({
    root,
    file,
    dataDir,
    databaseUrl,
    providers: ['  - name: openai', '    type: openai', `    base_url: ${upstream}/v1`, '    api_key: sk-upstream'],
    models: ['  - { name: mock, provider: openai, upstream_model: mock, pricing: { input: 0.15, output: 0.6 } }'],
  });
  const { child, port } = await startGateway({ root, file, cpu: 0, children });
  return { name: index === 0 && root === here ? 'this build' : root, pid: child.pid, port, key, storedSent: 0 };
}

async function main() {
  execFileSync('taskset', ['-a', '-p', '-c', '1', String(process.pid)], { stdio: 'ignore' });
  const mock = spawnTracked('taskset', ['-c', '1', process.execPath, path.join(here, 'bench/mock-upstream.mjs'), '0']);
  const upstream = `http://127.0.0.1:${(await listening(mock)).port}`;
  const pg = usePostgres ? createRequire(path.join(here, 'package.json'))('pg') : undefined;
  const builds = [];
  for (const [index, root] of roots.entries()) {
    const databaseUrl = pg ? await createDatabase(pg, index) : undefined;
    builds.push(await startBuild(root, index, upstream, databaseUrl));
  }
  await sleep(1000);
  // A window's CPU is read once the work it left behind is done too (its stored responses' batched write, the
  // checkpoint after it, a collection): otherwise the next window, of another arm, would be charged for it.
  const measure = async (build, arm, windowSeconds) => {
    const before = cpuNanosOf(build.pid);
    const threadsBefore = byThread ? threadNanosOf(build.pid) : undefined;
    const run = await (concurrency > 0 ? cpuAtSaturation : cpuAtRate)({
      url: `http://127.0.0.1:${build.port}${arm.path}`,
      headers: { authorization: `Bearer ${build.key}` },
      body: JSON.stringify(arm.body),
      pid: build.pid,
      rate,
      seconds: windowSeconds,
    });
    await sleep(settleMs);
    const sent = run.sent ?? Math.round(rate * windowSeconds);
    if (arm.body.store !== false && arm.path === '/v1/responses') build.storedSent += sent;
    if (threadsBefore) {
      const split = threadSplit(build.pid, threadsBefore, threadNanosOf(build.pid), sent);
      log(
        `${build.name}, ${arm.name}: event loop ${split.loop.toFixed(0)}, newest thread ${split.newest.toFixed(1)}, others ${split.others.toFixed(1)} µs`,
      );
    }
    return { total: (cpuNanosOf(build.pid).total - before.total) / 1000 / sent, failed: run.failed };
  };
  // Warm-up: JIT, connection pools, the database's first pages.
  for (const arm of arms) await Promise.all(builds.map((build) => measure(build, arm, 2)));
  const results = builds.map(() => Object.fromEntries(arms.map((arm) => [arm.name, []])));
  for (let round = 0; round < rounds; round++) {
    for (const arm of round % 2 === 0 ? arms : [...arms].reverse()) {
      const runs = await Promise.all(builds.map((build) => measure(build, arm, seconds)));
      for (const [index, run] of runs.entries()) {
        if (run.failed > 0) throw new Error(`${builds[index].name}, ${arm.name}: ${run.failed} requests failed`);
        results[index][arm.name].push(run.total);
      }
    }
    log(
      `round ${round + 1}/${rounds}: ${builds
        .map(
          (build, index) =>
            `${build.name}: ${arms.map((arm) => results[index][arm.name].at(-1).toFixed(0)).join(' / ')} µs`,
        )
        .join('; ')} (${arms.map((arm) => arm.name).join(' / ')})`,
    );
  }
  const lines = ['| build | chat µs | responses, store: false | responses, store: true |', '|---|---|---|---|'];
  const summary = builds.map((build, index) => {
    const chat = results[index].chat;
    const ratio = (name) => median(results[index][name].map((value, round) => value / chat[round]));
    const entry = {
      build: build.name,
      micros: Object.fromEntries(arms.map((arm) => [arm.name, median(results[index][arm.name])])),
      ratios: { storeFalse: ratio('responses, store: false'), storeTrue: ratio('responses, store: true') },
      runs: results[index],
    };
    lines.push(
      `| ${build.name} | ${entry.micros.chat.toFixed(0)} | ${entry.micros['responses, store: false'].toFixed(0)} (${entry.ratios.storeFalse.toFixed(2)}×) | ${entry.micros['responses, store: true'].toFixed(0)} (${entry.ratios.storeTrue.toFixed(2)}×) |`,
    );
    return entry;
  });
  process.stdout.write(
    `${JSON.stringify({ rounds, rate, concurrency, seconds, database: pg ? 'postgres' : 'sqlite', summary }, null, 2)}\n${lines.join('\n')}\n`,
  );
  for (const child of children) child.kill('SIGKILL');
  if (pg) {
    // Each build stored what it was sent with store: true (a failed batch write is only logged by the gateway).
    for (const [index, name] of databases.entries()) {
      const stored = await storedResponses(pg, name);
      log(`${builds[index].name}: ${stored} of ${builds[index].storedSent} stored responses in the database`);
    }
    await dropDatabases(pg);
  }
  process.exit(0);
}

main().catch(async (error) => {
  process.stderr.write(`${error.stack ?? error}\n`);
  for (const child of children) child.kill('SIGKILL');
  if (databases.length > 0) await dropDatabases(createRequire(path.join(here, 'package.json'))('pg')).catch(() => {});
  process.exit(1);
});
