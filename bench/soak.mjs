// Soak test: sustained mixed load (streaming and non-streaming) against a real `switchboard serve` for several
// minutes, sampling the gateway's RSS; then idle, to see memory come back down. Writes its section of
// docs/benchmarks.md. Usage: node bench/soak.mjs [--minutes 5] [--concurrency 32] [--idle-seconds 30]
import { cpus } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Agent, request } from 'undici';
import { configureGateway, startGateway } from './gateway.mjs';
import { benchWorkspace, listening, rssOf } from './process-tools.mjs';
import { writeSection } from './report.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const argument = (name, fallback) => {
  const index = process.argv.indexOf(`--${name}`);
  return index === -1 ? fallback : Number(process.argv[index + 1]);
};
const minutes = argument('minutes', 5);
const concurrency = argument('concurrency', 32);
const idleSeconds = argument('idle-seconds', 30);
const { children, spawnTracked, work } = benchWorkspace('switchboard-soak-', { stopSignal: 'SIGTERM' });
const log = (message) => process.stderr.write(`[soak] ${message}\n`);

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;

async function main() {
  const mock = await listening(spawnTracked(process.execPath, [path.join(root, 'bench/mock-upstream.mjs'), '0']));
  const file = path.join(work, 'switchboard.yaml');
  const key = configureGateway({
    root,
    file,
    dataDir: `${work}/data`,
    providers: ['  - name: mock', '    type: openai', `    base_url: http://127.0.0.1:${mock.port}/v1`],
    models: [
      '  - name: json',
      '    provider: mock',
      '    upstream_model: mock',
      '    pricing: { input: 0.15, output: 0.6 }',
      '  - name: stream',
      '    provider: mock',
      '    upstream_model: stream-16-5',
      '    pricing: { input: 0.15, output: 0.6 }',
    ],
    account: 'soak',
  });
  const gateway = await startGateway({ root, file, children });
  const pid = gateway.child.pid;
  const dispatcher = new Agent({ connections: concurrency * 2, keepAliveTimeout: 60_000 });
  await sleep(2000);
  const idleBefore = rssOf(pid);
  log(`gateway idle RSS ${idleBefore.toFixed(1)} MB; ${minutes} min of load at concurrency ${concurrency}`);

  const counts = { json: 0, stream: 0, errors: 0 };
  const samples = [];
  const end = Date.now() + minutes * 60_000;
  let sampler = setInterval(() => samples.push({ at: Date.now(), rss: rssOf(pid) }), 5000);
  const worker = async (index) => {
    let round = 0;
    while (Date.now() < end) {
      const streaming = (index + round++) % 2 === 0;
      try {
        const response = await request(`${gateway.url}/v1/chat/completions`, {
          method: 'POST',
          dispatcher,
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({
            model: streaming ? 'stream' : 'json',
            stream: streaming,
            ...(streaming ? { stream_options: { include_usage: index % 4 === 0 } } : {}),
            messages: [{ role: 'user', content: `soak ${index} ${round}` }],
          }),
        });
        const text = await response.body.text();
        if (response.statusCode !== 200 || (streaming && !text.endsWith('data: [DONE]\n\n'))) counts.errors++;
        else counts[streaming ? 'stream' : 'json']++;
      } catch {
        counts.errors++;
      }
    }
  };
  const progress = setInterval(() => {
    const last = samples.at(-1);
    log(
      `${Math.round((end - Date.now()) / 1000)} s left: ${counts.json} json, ${counts.stream} streams, ${counts.errors} errors, RSS ${last ? last.rss.toFixed(1) : '?'} MB`,
    );
  }, 30_000);
  await Promise.all(Array.from({ length: concurrency }, (_, index) => worker(index)));
  clearInterval(progress);
  clearInterval(sampler);
  await dispatcher.close();
  log(`load done; idling ${idleSeconds} s`);
  const idleSamples = [];
  sampler = setInterval(() => idleSamples.push(rssOf(pid)), 1000);
  await sleep(idleSeconds * 1000);
  clearInterval(sampler);
  const idleAfter = rssOf(pid);

  const during = samples.map((sample) => sample.rss);
  const half = samples.slice(Math.floor(samples.length / 2));
  // Least-squares slope of RSS over the second half of the load, in MB per minute: growth would show here.
  const meanT = half.reduce((sum, sample) => sum + sample.at, 0) / half.length;
  const meanR = half.reduce((sum, sample) => sum + sample.rss, 0) / half.length;
  const slope =
    (half.reduce((sum, sample) => sum + (sample.at - meanT) * (sample.rss - meanR), 0) /
      Math.max(
        1,
        half.reduce((sum, sample) => sum + (sample.at - meanT) ** 2, 0),
      )) *
    60_000;
  const total = counts.json + counts.stream;
  const summary = {
    minutes,
    concurrency,
    requests: total,
    ...counts,
    idleBefore,
    idleAfter,
    median: median(during),
    max: Math.max(...during),
    slope,
  };
  log(JSON.stringify(summary));

  writeSection(
    'soak',
    `## Soak: memory under sustained load

Measured by \`node bench/soak.mjs --minutes ${minutes} --concurrency ${concurrency}\` on ${new Date().toISOString().slice(0, 10)}
(${cpus().length} × ${cpus()[0]?.model ?? 'CPU'}, Node ${process.version}): a real \`switchboard serve\` with request
logging on, behind it \`bench/mock-upstream.mjs\`; ${concurrency} clients in a closed loop alternating non-streaming
requests and streams of 16 chunks 5 ms apart (a quarter of them with \`include_usage\`), for ${minutes} minutes, then
${idleSeconds} s idle. RSS read from \`/proc/<pid>/status\` every 5 s.

| Measure | Value |
|---|---|
| Requests completed (JSON / streams) | ${total} (${counts.json} / ${counts.stream}) |
| Errors (non-200, or a stream without \`[DONE]\`) | ${counts.errors} |
| RSS idle before the load | ${idleBefore.toFixed(1)} MB |
| RSS during the load: median / max | ${median(during).toFixed(1)} / ${Math.max(...during).toFixed(1)} MB |
| RSS trend over the second half of the load | ${slope >= 0 ? '+' : ''}${slope.toFixed(2)} MB/min |
| RSS ${idleSeconds} s after the load | ${idleAfter.toFixed(1)} MB (${((idleAfter / idleBefore - 1) * 100).toFixed(0)}% vs idle before) |

RSS samples during the load (MB): ${during.map((value) => value.toFixed(0)).join(', ')}.
`,
  );
  log('wrote docs/benchmarks.md (soak section)');
}

main()
  .then(() => process.exit(0))
  .catch((error) => {
    log(error.stack ?? String(error));
    process.exit(1);
  });
