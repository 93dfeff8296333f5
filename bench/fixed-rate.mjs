// CPU per request at a fixed, everyday rate (open loop), as `npm run bench` and `bench:quick` report it, and as a
// tool to compare builds: node bench/fixed-rate.mjs [--rates 300,30] [--seconds 6] [--rounds 4] [--root <dir> ...]
// starts nginx (the upstream, CPU 1), the floor and one Switchboard per --root (this checkout when none; all on CPU 0),
// and measures them all at once at each rate, in consecutive windows, reporting the ratio to the floor per window.
// CPU is read from /proc/<pid>/task/*/schedstat (nanoseconds, every thread), not from the 10 ms ticks of /proc/stat,
// so that a few hundred requests are enough; the event loop (the main thread) is reported beside the total.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Agent, request } from 'undici';
import { fixture } from './fixture.mjs';
import { configureGateway, startGateway } from './gateway.mjs';
import { benchWorkspace, listening, median } from './process-tools.mjs';

/** CPU nanoseconds used so far by every thread of a process, and by its main thread (the event loop). */
export function cpuNanosOf(pid) {
  let total = 0;
  let main = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const nanos = Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
      total += nanos;
      if (tid === String(pid)) main = nanos;
    } catch {
      // The thread ended between the listing and the read (its time is then lost to both readings alike).
    }
  }
  return { total, main };
}

/**
 * Sends `rate` requests per second for `seconds`, evenly spaced (open loop: a slow answer does not delay the next
 * request), and returns the process's CPU microseconds per request, all threads and the event loop alone.
 */
export async function cpuAtRate({ url, headers = {}, body, pid, rate, seconds }) {
  const dispatcher = new Agent({ connections: 64, keepAliveTimeout: 60_000 });
  const send = () =>
    request(url, {
      method: 'POST',
      dispatcher,
      headers: { 'content-type': 'application/json', ...headers },
      body,
    }).then(async (response) => {
      await response.body.dump();
      if (response.statusCode !== 200) throw new Error(`${url} answered ${response.statusCode}`);
    });
  const pending = [];
  const before = cpuNanosOf(pid);
  const started = performance.now();
  let sent = 0;
  const total = Math.round(rate * seconds);
  while (sent < total) {
    // Every request due by now; then sleep until the next one is.
    const due = Math.min(total, Math.floor(((performance.now() - started) * rate) / 1000) + 1);
    while (sent < due) {
      sent++;
      pending.push(send());
    }
    const next = (sent * 1000) / rate;
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, next - (performance.now() - started))));
  }
  const results = await Promise.allSettled(pending);
  const after = cpuNanosOf(pid);
  await dispatcher.close();
  const failed = results.filter((result) => result.status === 'rejected').length;
  return {
    total: (after.total - before.total) / 1000 / sent,
    main: (after.main - before.main) / 1000 / sent,
    failed,
  };
}

/**
 * The arms given ({ name, url, headers, body, pid }) measured at the same time, each at `rate`: the pairing that
 * leaves nothing to chance, since every arm sees the same machine at the same moment, and none sits idle while the
 * others are measured (a gateway that goes quiet gives memory back and warms up again: a cost of its own, not of the
 * rate). First 3 s at 500 requests/s, then before each rate `warmUpSeconds` at that rate, then `rounds` windows of
 * `seconds`. The load comes from this process, kept off the gateways' core (CPU 1). Returns, per rate and arm, one run
 * per window.
 */
export async function pairedFixedRate({ arms, rates, seconds, rounds, warmUpSeconds = 2, log = () => {} }) {
  try {
    execFileSync('taskset', ['-a', '-p', '-c', '1', String(process.pid)], { stdio: 'ignore' });
  } catch {
    // Without taskset the load shares the machine unpinned, as it would anyway.
  }
  // A gateway that sat idle a few seconds before (bench:quick's other arms) recompiles what its quiet-time reclaim
  // deoptimized: ~1,500 requests at 300/s left its first window at up to 2× the floor, the next ones at ~1.3×.
  await Promise.all(arms.map((arm) => cpuAtRate({ ...arm, rate: 500, seconds: 3 })));
  const results = {};
  for (const rate of rates) {
    results[rate] = Object.fromEntries(arms.map((arm) => [arm.name, []]));
    await Promise.all(arms.map((arm) => cpuAtRate({ ...arm, rate, seconds: warmUpSeconds })));
    for (let round = 0; round < rounds; round++) {
      const runs = await Promise.all(arms.map((arm) => cpuAtRate({ ...arm, rate, seconds })));
      for (const [index, run] of runs.entries()) results[rate][arms[index].name].push(run);
      log(
        `${rate} req/s, window ${round + 1}/${rounds}: ${arms.map((arm, index) => `${arm.name} ${runs[index].total.toFixed(0)} µs`).join(', ')} per request`,
      );
    }
  }
  return results;
}

/** Medians of a rate's runs, and of each arm's per-round ratio to the reference arm (the floor). */
export function summarizeFixedRate(runs, reference) {
  const summary = {};
  for (const [name, list] of Object.entries(runs)) {
    summary[name] = {
      total: median(list.map((run) => run.total)),
      main: median(list.map((run) => run.main)),
      ratio: median(list.map((run, index) => run.total / runs[reference][index].total)),
      ratios: list.map((run, index) => run.total / runs[reference][index].total),
      failed: list.reduce((sum, run) => sum + run.failed, 0),
    };
  }
  return summary;
}

// ---------------------------------------------------------------- CLI: compare builds
async function main() {
  const here = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
  const option = (name, fallback) => {
    const index = process.argv.indexOf(name);
    return index === -1 ? fallback : process.argv[index + 1];
  };
  const roots = process.argv.flatMap((value, index) => (process.argv[index - 1] === '--root' ? [value] : []));
  if (roots.length === 0) roots.push(here);
  const rates = option('--rates', '300,30').split(',').map(Number);
  const seconds = Number(option('--seconds', 6));
  const rounds = Number(option('--rounds', 4));
  const { children, spawnTracked, work } = benchWorkspace('switchboard-fixed-rate-');
  const log = (message) => process.stderr.write(`[fixed-rate] ${message}\n`);
  const upstreamPort = 25_000 + Math.floor(Math.random() * 2000);
  mkdirSync(path.join(work, 'nginx'));
  writeFileSync(
    path.join(work, 'nginx/nginx.conf'),
    `daemon off;\nworker_processes 1;\nerror_log ${work}/nginx/error.log error;\npid ${work}/nginx/nginx.pid;\nevents { worker_connections 4096; }\nhttp {\n  access_log off;\n  keepalive_requests 10000000;\n  client_body_temp_path ${work}/nginx/body;\n  proxy_temp_path ${work}/nginx/proxy;\n  fastcgi_temp_path ${work}/nginx/fastcgi;\n  uwsgi_temp_path ${work}/nginx/uwsgi;\n  scgi_temp_path ${work}/nginx/scgi;\n  server {\n    listen 127.0.0.1:${upstreamPort};\n    location / {\n      default_type application/json;\n      return 200 '${fixture}';\n    }\n  }\n}\n`,
  );
  const nginx = spawnTracked(
    'taskset',
    ['-c', '1', '/usr/sbin/nginx', '-c', `${work}/nginx/nginx.conf`, '-p', `${work}/nginx`],
    { stdio: 'ignore' },
  );
  nginx.stopSignal = 'SIGTERM';
  const upstream = `http://127.0.0.1:${upstreamPort}`;
  for (let attempt = 0; ; attempt++) {
    try {
      await fetch(upstream);
      break;
    } catch (error) {
      if (attempt > 100) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  const body = JSON.stringify({ model: 'mock', messages: [{ role: 'user', content: 'Hello! '.repeat(120) }] });
  const floor = spawnTracked('taskset', [
    '-c',
    '0',
    process.execPath,
    path.join(here, 'bench/floor/server.mjs'),
    '0',
    upstream,
  ]);
  const arms = [
    {
      name: 'floor',
      url: `http://127.0.0.1:${(await listening(floor)).port}/v1/chat/completions`,
      pid: floor.pid,
      body,
    },
  ];

  for (const [index, root] of roots.entries()) {
    const file = path.join(work, `switchboard-${index}.yaml`);
    const key = configureGateway({
      root,
      file,
      dataDir: path.join(work, `switchboard-${index}`),
      providers: ['  - name: nginx', '    type: openai', `    base_url: ${upstream}/v1`, '    api_key: sk-upstream'],
      models: ['  - name: mock', '    provider: nginx', '    pricing: { input: 0.15, output: 0.6 }'],
      keyName: 'rate',
    });
    const { child: gateway, port } = await startGateway({ root, file, cpu: 0, children });
    arms.push({
      name: roots.length === 1 ? 'switchboard' : `switchboard ${path.basename(root)}`,
      url: `http://127.0.0.1:${port}/v1/chat/completions`,
      headers: { authorization: `Bearer ${key}` },
      pid: gateway.pid,
      body,
    });
  }
  const results = await pairedFixedRate({ arms, rates, seconds, rounds, log });
  const report = {};
  for (const rate of rates) {
    const summary = summarizeFixedRate(results[rate], 'floor');
    report[rate] = summary;
    for (const [name, row] of Object.entries(summary)) {
      log(
        `${rate} req/s: ${name} ${row.total.toFixed(0)} µs per request (event loop ${row.main.toFixed(0)}), ${row.ratio.toFixed(2)}× the floor (rounds ${row.ratios.map((ratio) => ratio.toFixed(2)).join(' ')})${row.failed ? `, ${row.failed} failed` : ''}`,
      );
    }
  }
  process.stdout.write(`${JSON.stringify(report)}\n`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main()
    .then(() => process.exit(0))
    .catch((error) => {
      process.stderr.write(`${error.stack ?? error}\n`);
      process.exit(1);
    });
}
