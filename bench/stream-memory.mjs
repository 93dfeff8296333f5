// The memory arm of `npm run bench` on its own, to compare builds in a minute or two a round:
//   node bench/stream-memory.mjs [--root <dir> ...] [--arm name=<dir>[,VAR=value...]] [--rounds 3] [--streams 1000]
//     [--warm-seconds 5] [--after-seconds 30] [--server-output <dir>]
// For each build (--root: a checkout with dist/ built; this one when none; --arm: the same with a name and extra
// environment for the launcher, e.g. --arm trim=/work/main,MALLOC_ARENA_MAX=2) it starts Switchboard through
// bin/switchboard on CPU 0 in front of bench/mock-upstream.mjs (CPU 1) and reads RSS as the benchmark does: idle
// (started, 3 s settled), after --warm-seconds of saturation (wrk, c=64, then 8 s quiet), with --streams streams of
// 64 chunks 100 ms apart open (as the benchmark reads it: the median of 11 readings 200 ms apart over the 2 s after
// the last one opened, with their lowest and highest), and --after-seconds after they end. Builds take turns within each
// round; the quiet time after the streams overlaps between builds. One JSON line per build and round on stdout.
// --server-output keeps each server's stdout (its log lines, and what an --arm's NODE_OPTIONS prints, e.g.
// --trace-warnings; V8 tracing flags such as --trace-gc are refused there) as <dir>/<arm>-<round>.log.
import { execFileSync } from 'node:child_process';
import { createWriteStream, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { configureGateway, startGateway } from './gateway.mjs';
import { benchWorkspace, rssOf, rssReadings } from './process-tools.mjs';
import { holdStreams } from './stream-client.mjs';

const here = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const option = (name, fallback) => {
  const index = process.argv.indexOf(name);
  return index === -1 ? fallback : process.argv[index + 1];
};
const optionAll = (name) => process.argv.flatMap((value, index) => (process.argv[index - 1] === name ? [value] : []));
const rounds = Number(option('--rounds', 3));
const streamCount = Number(option('--streams', 1000));
const warmSeconds = Number(option('--warm-seconds', 5));
const afterSeconds = Number(option('--after-seconds', 30));
const serverOutput = option('--server-output');
const builds = [
  ...optionAll('--root').map((root) => ({ name: root, root: path.resolve(root), env: {} })),
  ...optionAll('--arm').map((spec) => {
    const [name, rest] = spec.split(/=(.*)/s);
    const [root, ...assignments] = rest.split(',');
    return { name, root: path.resolve(root), env: Object.fromEntries(assignments.map((pair) => pair.split(/=(.*)/s))) };
  }),
];
if (builds.length === 0) builds.push({ name: here, root: here, env: {} });

const { children, spawnTracked, work } = benchWorkspace('switchboard-stream-memory-');
process.on('SIGTERM', () => process.exit(143));
const started = Date.now();
const log = (message) =>
  process.stderr.write(`[stream-memory ${Math.round((Date.now() - started) / 1000)}s] ${message}\n`);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
let nextPort = 24_000 + Math.floor(Math.random() * 2000);

const upstreamPort = nextPort++;
const upstream = spawnTracked('taskset', [
  '-c',
  '1',
  process.execPath,
  path.join(here, 'bench/mock-upstream.mjs'),
  String(upstreamPort),
]);
await sleep(500);
if (upstream.exitCode !== null) throw new Error('the mock upstream did not start');

const loadScript = path.join(work, 'load.lua');
const body = JSON.stringify({ model: 'mock', messages: [{ role: 'user', content: 'Hello! '.repeat(120) }] });

/** A data directory, config and key for one build (set up by that build's own CLI). */
function prepare(build, index) {
  const file = path.join(work, `switchboard-${index}.yaml`);
  const port = nextPort++;
  const key = configureGateway({
    root: build.root,
    file,
    port,
    dataDir: path.join(work, `data-${index}`),
    providers: ['  - name: streams', '    type: openai', `    base_url: http://127.0.0.1:${upstreamPort}/v1`],
    models: ['  - name: mock', '    provider: streams', '  - name: stream-64-100', '    provider: streams'],
    keyName: 'memory',
  });
  return { ...build, file, url: `http://127.0.0.1:${port}/v1/chat/completions`, key };
}

const prepared = builds.map(prepare);
for (const round of Array.from({ length: rounds }, (_, index) => index + 1)) {
  const order = round % 2 ? prepared : [...prepared].reverse();
  for (const build of order) {
    build.child = (await startGateway({ root: build.root, file: build.file, cpu: 0, env: build.env, children })).child;
    if (serverOutput) {
      const file = path.join(serverOutput, `${build.name.replaceAll('/', '_')}-${round}.log`);
      build.child.stdout.pipe(createWriteStream(file));
    }
  }
  await sleep(3000);
  for (const build of order) build.result = { name: build.name, round, idle: rssOf(build.child.pid) };
  for (const build of order) {
    if (warmSeconds <= 0) continue;
    writeFileSync(
      loadScript,
      `wrk.method = "POST"\nwrk.body = ${JSON.stringify(body)}\nwrk.headers["Content-Type"] = "application/json"\nwrk.headers["Authorization"] = "Bearer ${build.key}"\n`,
    );
    const output = execFileSync(
      'taskset',
      ['-c', '1', 'wrk', '-t1', '-c64', `-d${warmSeconds}s`, '-s', loadScript, build.url],
      { encoding: 'utf8' },
    );
    build.result.warmRps = Number(output.match(/Requests\/sec:\s+([\d.]+)/)?.[1] ?? 0);
    build.result.afterWarm = rssOf(build.child.pid);
  }
  await sleep(8000);
  for (const build of order) {
    build.result.beforeStreams = rssOf(build.child.pid);
    const held = await holdStreams({
      url: build.url,
      headers: { authorization: `Bearer ${build.key}` },
      body: { model: 'stream-64-100', stream: true, messages: [{ role: 'user', content: 'hi' }] },
      count: streamCount,
      onAllOpen: async (endedSoFar) => {
        return { ...(await rssReadings(build.child.pid)), ended: endedSoFar() };
      },
    });
    build.result.atStreams = held.sample.median;
    build.result.streamsMin = held.sample.min;
    build.result.streamsMax = held.sample.max;
    build.result.endedWhileRead = held.sample.ended;
    build.result.failures = held.failures;
    build.ended = Date.now();
  }
  for (const build of order) {
    await sleep(Math.max(0, build.ended + afterSeconds * 1000 - Date.now()));
    build.result.after = rssOf(build.child.pid);
    build.result.afterOverIdle = build.result.after / build.result.idle - 1;
  }
  for (const build of order) {
    const r = build.result;
    log(
      `round ${round} ${build.name}: idle ${r.idle.toFixed(0)}, after load ${r.afterWarm?.toFixed(0)}, ${streamCount} streams ${r.atStreams.toFixed(0)} MB (median; readings ${r.streamsMin.toFixed(0)}–${r.streamsMax.toFixed(0)}, ${r.endedWhileRead} ended before the last; ${r.failures} failed), ${afterSeconds} s after ${r.after.toFixed(0)} MB (${(r.afterOverIdle * 100).toFixed(0)}% over idle)`,
    );
    process.stdout.write(`${JSON.stringify(r)}\n`);
    build.child.kill('SIGTERM');
    await new Promise((resolve) => build.child.once('exit', resolve));
  }
}
process.exit(0);
