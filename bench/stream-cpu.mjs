// CPU per stream, builds compared side by side: node bench/stream-cpu.mjs --root <checkout> --root <checkout>
//   [--rate 150] [--seconds 5] [--rounds 6]
// One bench/mock-upstream.mjs on CPU 1; one Switchboard as shipped (bin/switchboard, a real key, request log and metrics
// on) per --root on CPU 0, each with its own data directory. Per window, every build gets the same open-loop load at
// the same time: --rate streams a second of 32 events 5 ms apart, chat to an OpenAI upstream and a Messages request
// forwarded to an Anthropic one in turn. CPU is every thread's, from /proc/<pid>/task/*/schedstat, read once the
// window's streams have ended; the ratio to the first build is taken per window and its median reported.
import path from 'node:path';
import { Agent, request } from 'undici';
import { cpuNanosOf } from './fixed-rate.mjs';
import { configureGateway, startGateway } from './gateway.mjs';
import { benchWorkspace, listening, median } from './process-tools.mjs';

const option = (name, fallback) => {
  const index = process.argv.indexOf(name);
  return index === -1 ? fallback : process.argv[index + 1];
};
const roots = process.argv.flatMap((value, index) => (process.argv[index - 1] === '--root' ? [value] : []));
const rate = Number(option('--rate', 150));
const seconds = Number(option('--seconds', 5));
const rounds = Number(option('--rounds', 6));
if (roots.length === 0) throw new Error('name the builds to compare with --root');
const here = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const { children, spawnTracked, work } = benchWorkspace('switchboard-stream-cpu-');
const log = (message) => process.stderr.write(`[stream-cpu] ${message}\n`);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

const prompt = 'Hello! '.repeat(120);
const kinds = [
  {
    name: 'chat',
    path: '/v1/chat/completions',
    headers: {},
    body: JSON.stringify({ model: 'gpt-stream', stream: true, messages: [{ role: 'user', content: prompt }] }),
  },
  {
    name: 'messages',
    path: '/v1/messages',
    headers: { 'anthropic-version': '2023-06-01' },
    body: JSON.stringify({
      model: 'claude-stream',
      stream: true,
      max_tokens: 1024,
      messages: [{ role: 'user', content: prompt }],
    }),
  },
];

async function startBuild(root, index, upstream) {
  const file = path.join(work, `switchboard-${index}.yaml`);
  const key = configureGateway({
    root,
    file,
    dataDir: path.join(work, `data-${index}`),
    providers: [
      `  - { name: openai, type: openai, base_url: ${upstream}/v1, api_key: sk-upstream }`,
      `  - { name: anthropic, type: anthropic, base_url: ${upstream}/v1, api_key: sk-ant-upstream }`,
    ],
    models: [
      '  - { name: gpt-stream, provider: openai, upstream_model: stream-32-5, pricing: { input: 0.15, output: 0.6 } }',
      '  - { name: claude-stream, provider: anthropic, upstream_model: stream-32-5, pricing: { input: 3, output: 15 } }',
    ],
  });
  const { child: gateway, port } = await startGateway({ root, file, cpu: 0, children });
  return {
    name: path.basename(root),
    url: `http://127.0.0.1:${port}`,
    key,
    pid: gateway.pid,
    dispatcher: new Agent({ connections: 256, keepAliveTimeout: 60_000 }),
  };
}

async function oneStream(build, kind) {
  const response = await request(`${build.url}${kind.path}`, {
    method: 'POST',
    dispatcher: build.dispatcher,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${build.key}`, ...kind.headers },
    body: kind.body,
  });
  const text = await response.body.text();
  if (response.statusCode !== 200 || !/message_stop|\[DONE\]/.test(text)) {
    throw new Error(`${build.name} ${kind.name}: ${response.statusCode} ${text.slice(0, 200)}`);
  }
}

/** Every build at once: `rate` streams a second of `kind` for `seconds`; CPU microseconds per stream of each. */
async function window(builds, kind) {
  const before = builds.map((build) => cpuNanosOf(build.pid).total);
  const pending = [];
  const total = Math.round(rate * seconds);
  const started = performance.now();
  for (let sent = 0; sent < total; ) {
    const due = Math.min(total, Math.floor(((performance.now() - started) * rate) / 1000) + 1);
    for (; sent < due; sent++) for (const build of builds) pending.push(oneStream(build, kind));
    await sleep(Math.max(0, (sent * 1000) / rate - (performance.now() - started)));
  }
  await Promise.all(pending);
  // schedstat is brought up to date at a thread's next switch: let the last writes settle.
  await sleep(500);
  return builds.map((build, index) => (cpuNanosOf(build.pid).total - before[index]) / 1000 / total);
}

async function main() {
  const mock = spawnTracked('taskset', ['-c', '1', process.execPath, path.join(here, 'bench/mock-upstream.mjs'), '0']);
  const upstream = `http://127.0.0.1:${(await listening(mock)).port}`;
  const builds = [];
  for (const [index, root] of roots.entries()) builds.push(await startBuild(root, index, upstream));
  await sleep(2000);
  log(`warming up ${builds.map((build) => build.name).join(', ')}`);
  for (const kind of kinds) await window(builds, kind);
  const results = Object.fromEntries(kinds.map((kind) => [kind.name, builds.map(() => [])]));
  for (let round = 1; round <= rounds; round++) {
    for (const kind of round % 2 ? kinds : [...kinds].reverse()) {
      const micros = await window(builds, kind);
      for (const [index, value] of micros.entries()) results[kind.name][index].push(value);
      log(`round ${round} ${kind.name}: ${micros.map((value) => value.toFixed(0)).join(' / ')} µs per stream`);
    }
  }
  const report = {};
  for (const kind of kinds) {
    const [reference, ...others] = results[kind.name];
    report[kind.name] = {
      microsPerStream: Object.fromEntries(
        builds.map((build, index) => [build.name, median(results[kind.name][index])]),
      ),
      ratios: others.map((values) => {
        const ratios = values.map((value, index) => value / reference[index]);
        return { median: median(ratios), windows: ratios.map((ratio) => Number(ratio.toFixed(3))) };
      }),
    };
  }
  process.stdout.write(`${JSON.stringify({ rate, seconds, rounds, report }, null, 2)}\n`);
  process.exit(0);
}

main().catch((error) => {
  process.stderr.write(`${error.stack ?? error}\n`);
  process.exit(1);
});
