// bench/run.sh --messages: the gateway CPU a /v1/messages call forwarded to an Anthropic upstream costs, next to a
// chat completion forwarded to an OpenAI upstream (issue 24's target: within ~10%). One Switchboard as shipped
// (bin/switchboard launcher, a real key, request log and metrics on) pinned to CPU 0, one mock upstream
// (bench/mock-upstream.mjs) answering both APIs with the same text on CPU 1. Per round and arm, in alternating order:
// CPU microseconds of the Switchboard process per request at a fixed open-loop rate (JSON), and per stream of 32
// events (16 streams at a time). Prints each round and the medians, and the ratio messages / chat.
//   node bench/messages-cpu.mjs [--rounds N] [--seconds S] [--rate R]
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Agent, request } from 'undici';
import { configureGateway, startGateway } from './gateway.mjs';
import { benchWorkspace, listening, median } from './process-tools.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const option = (name, fallback) => {
  const index = process.argv.indexOf(name);
  return index === -1 ? fallback : Number(process.argv[index + 1]);
};
const rounds = option('--rounds', 5);
const seconds = option('--seconds', 6);
const rate = option('--rate', 300);
const streamsPerRun = 160;
const { children, spawnTracked, work } = benchWorkspace('switchboard-bench-messages-');

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const cpuMicrosOf = (pid) => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
};
const log = (message) => process.stderr.write(`[bench:messages] ${message}\n`);

const prompt = 'Hello! '.repeat(120);
const arms = [
  {
    name: 'chat → OpenAI',
    path: '/v1/chat/completions',
    body: (model) => ({ model, messages: [{ role: 'user', content: prompt }] }),
    headers: {},
  },
  {
    name: 'messages → Anthropic',
    path: '/v1/messages',
    body: (model) => ({ model, max_tokens: 1024, messages: [{ role: 'user', content: prompt }] }),
    headers: { 'anthropic-version': '2023-06-01' },
  },
];
const modelOf = (arm, stream) => `${arm.path === '/v1/messages' ? 'claude' : 'gpt'}-${stream ? 'stream' : 'json'}`;

/** CPU microseconds of `pid` per JSON request at `rate` requests a second for `seconds` (open loop). */
async function cpuPerRequest(url, arm, pid) {
  const dispatcher = new Agent({ connections: 64, keepAliveTimeout: 60_000 });
  const body = JSON.stringify(arm.body(modelOf(arm, false)));
  const headers = { 'content-type': 'application/json', ...arm.headers, ...arm.auth };
  const before = cpuMicrosOf(pid);
  const end = Date.now() + seconds * 1000;
  const pending = [];
  let sent = 0;
  let failed = 0;
  while (Date.now() < end) {
    const tickStart = Date.now();
    for (let index = 0; index < rate / 100; index++) {
      sent++;
      pending.push(
        request(`${url}${arm.path}`, { method: 'POST', dispatcher, headers, body }).then(async (response) => {
          if (response.statusCode !== 200) failed++;
          await response.body.dump();
        }),
      );
    }
    await sleep(Math.max(0, 10 - (Date.now() - tickStart)));
  }
  await Promise.allSettled(pending);
  const used = cpuMicrosOf(pid) - before;
  await dispatcher.close();
  if (failed > 0) throw new Error(`${arm.name}: ${failed} of ${sent} requests failed`);
  return used / sent;
}

/** CPU microseconds of `pid` per stream (32 events, 5 ms apart), 16 streams at a time. */
async function cpuPerStream(url, arm, pid) {
  const dispatcher = new Agent({ connections: 16, keepAliveTimeout: 60_000 });
  const body = JSON.stringify({ ...arm.body(modelOf(arm, true)), stream: true });
  const headers = { 'content-type': 'application/json', ...arm.headers, ...arm.auth };
  const before = cpuMicrosOf(pid);
  let next = 0;
  const worker = async () => {
    while (next < streamsPerRun) {
      next++;
      const response = await request(`${url}${arm.path}`, { method: 'POST', dispatcher, headers, body });
      const text = await response.body.text();
      if (response.statusCode !== 200 || !/message_stop|\[DONE\]/.test(text)) throw new Error(`${arm.name}: ${text}`);
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
  const used = cpuMicrosOf(pid) - before;
  await dispatcher.close();
  return used / streamsPerRun;
}

async function main() {
  const mock = spawnTracked('taskset', ['-c', '1', process.execPath, path.join(root, 'bench/mock-upstream.mjs'), '0']);
  const upstream = `http://127.0.0.1:${(await listening(mock)).port}`;
  const file = path.join(work, 'switchboard.yaml');
  const key = configureGateway({
    root,
    file,
    dataDir: path.join(work, 'data'),
    providers: [
      '  - name: openai',
      '    type: openai',
      `    base_url: ${upstream}/v1`,
      '    api_key: sk-upstream',
      '  - name: anthropic',
      '    type: anthropic',
      `    base_url: ${upstream}/v1`,
      '    api_key: sk-ant-upstream',
    ],
    models: [
      '  - { name: gpt-json, provider: openai, upstream_model: mock, pricing: { input: 0.15, output: 0.6 } }',
      '  - { name: gpt-stream, provider: openai, upstream_model: stream-32-5, pricing: { input: 0.15, output: 0.6 } }',
      '  - { name: claude-json, provider: anthropic, upstream_model: mock, pricing: { input: 3, output: 15 } }',
      '  - { name: claude-stream, provider: anthropic, upstream_model: stream-32-5, pricing: { input: 3, output: 15 } }',
    ],
  });
  const { child: switchboard, port } = await startGateway({ root, file, cpu: 0, children });
  const url = `http://127.0.0.1:${port}`;
  for (const arm of arms) arm.auth = { authorization: `Bearer ${key}` };
  await sleep(2000);
  // Warm up both paths (JIT, connection pools) before anything is measured.
  for (const arm of arms) {
    await cpuPerRequest(url, arm, switchboard.pid);
    await cpuPerStream(url, arm, switchboard.pid);
  }
  const results = Object.fromEntries(arms.map((arm) => [arm.name, { json: [], stream: [] }]));
  for (let round = 1; round <= rounds; round++) {
    const order = round % 2 ? arms : [...arms].reverse();
    for (const arm of order) {
      results[arm.name].json.push(await cpuPerRequest(url, arm, switchboard.pid));
      results[arm.name].stream.push(await cpuPerStream(url, arm, switchboard.pid));
    }
    const [chat, messages] = arms.map((arm) => results[arm.name]);
    log(
      `round ${round}: JSON ${chat.json.at(-1).toFixed(0)} vs ${messages.json.at(-1).toFixed(0)} µs/request, ` +
        `stream ${chat.stream.at(-1).toFixed(0)} vs ${messages.stream.at(-1).toFixed(0)} µs/stream`,
    );
  }
  const [chat, messages] = arms.map((arm) => results[arm.name]);
  const summary = {
    rounds,
    rate,
    seconds,
    jsonMicrosPerRequest: { chat: median(chat.json), messages: median(messages.json) },
    streamMicrosPerStream: { chat: median(chat.stream), messages: median(messages.stream) },
    jsonRatio: median(messages.json.map((value, index) => value / chat.json[index])),
    streamRatio: median(messages.stream.map((value, index) => value / chat.stream[index])),
  };
  process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
  process.stdout.write(
    `| | chat → OpenAI | messages → Anthropic | ratio (median of rounds) |\n|---|---|---|---|\n` +
      `| JSON, CPU µs per request at ${rate}/s | ${summary.jsonMicrosPerRequest.chat.toFixed(0)} | ${summary.jsonMicrosPerRequest.messages.toFixed(0)} | ${summary.jsonRatio.toFixed(2)}× |\n` +
      `| stream of 32 events, CPU µs per stream | ${summary.streamMicrosPerStream.chat.toFixed(0)} | ${summary.streamMicrosPerStream.messages.toFixed(0)} | ${summary.streamRatio.toFixed(2)}× |\n`,
  );
  process.exit(0);
}

main().catch((error) => {
  process.stderr.write(`${error.stack ?? error}\n`);
  process.exit(1);
});
