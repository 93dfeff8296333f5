// npm run bench: Switchboard side by side with the direct upstream, a bare Node proxy (the floor), nginx as a
// reverse proxy (the physical limit of this box), the Portkey gateway and the LiteLLM proxy, measured in the same
// run, alternating arms, following ../shared/reference/benchmark-method.md. Writes its section of
// docs/benchmarks.md and docs/benchmarks-chart.svg.
//   node bench/compare.mjs [--quick] [--no-peers] [--rounds N]
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { pairedFixedRate, summarizeFixedRate } from './fixed-rate.mjs';
import { fixture } from './fixture.mjs';
import { configureGateway, startGateway } from './gateway.mjs';
import {
  fixedHonoAdapter,
  installLitellm,
  installPortkey,
  litellmVersion,
  portkeyVersion,
  startLitellm,
  startPortkey,
} from './peers.mjs';
import { benchWorkspace, listening, median, rssOf, rssReadings } from './process-tools.mjs';
import { writeSection } from './report.mjs';
import { holdStreams, measureStreams } from './stream-client.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const quick = process.argv.includes('--quick');
const withPeers = !quick && !process.argv.includes('--no-peers');
const roundsIndex = process.argv.indexOf('--rounds');
const rounds = roundsIndex !== -1 ? Number(process.argv[roundsIndex + 1]) : quick ? 1 : 3;
const latencySeconds = quick ? 3 : 12;
const saturationSeconds = quick ? 4 : 8;
// bench:quick measures the floor and Switchboard at c=64 in short paired rounds instead of one run each, and takes
// the throughput ratio per round (its median is `floorShare`): the machine's speed drifts by ±15% from one minute to
// the next, and one pair of runs gave the same build a floor share anywhere from 0.47 to 0.87, while two runs seconds
// apart see the same machine.
const pairedRounds = quick ? 6 : 0;
const pairedSeconds = 2;
const { children, spawnTracked, work } = benchWorkspace('switchboard-bench-');
const started = Date.now();
const log = (message) => process.stderr.write(`[bench ${Math.round((Date.now() - started) / 1000)}s] ${message}\n`);

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const range = (values, digits = 0) => `${Math.min(...values).toFixed(digits)}–${Math.max(...values).toFixed(digits)}`;
const cpuMicrosOf = (pid) => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  // utime and stime, in clock ticks (100 per second on Linux)
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
};
let nextPort = 21_000 + Math.floor(Math.random() * 2000);
const dispatchFloorName = 'floor, undici dispatch';
const tenantsArmName = 'switchboard, 100 tenants in turn';
const tenantCount = 100;
/** The everyday rates at which CPU per request is measured (requests per second). */
const fixedRates = [300, 30];
const port = () => nextPort++;

// ---------------------------------------------------------------- upstreams
const nginxBinary = ['/usr/sbin/nginx', 'nginx'].find((candidate) => {
  try {
    execFileSync(candidate, ['-v'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
});

function startNginx(name, cpu, serverBlock) {
  const directory = path.join(work, name);
  execFileSync('mkdir', ['-p', directory]);
  const conf = path.join(directory, 'nginx.conf');
  writeFileSync(
    conf,
    `daemon off;\nworker_processes 1;\nerror_log ${directory}/error.log error;\npid ${directory}/nginx.pid;\nevents { worker_connections 8192; }\nhttp {\n  access_log off;\n  keepalive_requests 10000000;\n  keepalive_timeout 300s;\n  client_body_temp_path ${directory}/body;\n  proxy_temp_path ${directory}/proxy;\n  fastcgi_temp_path ${directory}/fastcgi;\n  uwsgi_temp_path ${directory}/uwsgi;\n  scgi_temp_path ${directory}/scgi;\n${serverBlock}\n}\n`,
  );
  const nginx = spawnTracked('taskset', ['-c', cpu, nginxBinary, '-c', conf, '-p', directory], { stdio: 'ignore' });
  // Killed outright, nginx's master would leave its worker running (and listening) after the bench.
  nginx.stopSignal = 'SIGTERM';
}

async function waitFor(url) {
  for (let attempt = 0; attempt < 200; attempt++) {
    try {
      await fetch(url);
      return;
    } catch {
      await sleep(100);
    }
  }
  throw new Error(`${url} did not come up`);
}

// ---------------------------------------------------------------- load
const requestBody = JSON.stringify({ model: 'MODEL', messages: [{ role: 'user', content: 'Hello! '.repeat(120) }] });

function wrkScript(name, model, headers, body = requestBody.replace('MODEL', model)) {
  const file = path.join(work, `${name}.lua`);
  const lines = Object.entries(headers).map(
    ([header, value]) => `wrk.headers[${JSON.stringify(header)}] = ${JSON.stringify(value)}`,
  );
  writeFileSync(
    file,
    `wrk.method = "POST"\nwrk.body = ${JSON.stringify(body)}\nwrk.headers["Content-Type"] = "application/json"\n${lines.join('\n')}\n` +
      `done = function(summary, latency, requests)\n  local errors = summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout\n` +
      `  io.write(string.format('RESULT {"requests":%d,"duration_us":%d,"p50":%d,"p99":%d,"errors":%d,"non2xx":%d}\\n', summary.requests, summary.duration, latency:percentile(50), latency:percentile(99), errors, summary.errors.status))\nend\n`,
  );
  return file;
}

/** A wrk script whose requests take turns among several keys (one per tenant), as traffic of many accounts arrives. */
function wrkScriptTakingTurns(name, model, keys) {
  const file = path.join(work, `${name}.lua`);
  writeFileSync(
    file,
    `local keys = {${keys.map((key) => JSON.stringify(key)).join(', ')}}\nlocal turn = 0\n` +
      `request = function()\n  turn = turn + 1\n  return wrk.format("POST", nil, {["Content-Type"] = "application/json", ["Authorization"] = "Bearer " .. keys[(turn % #keys) + 1]}, ${JSON.stringify(requestBody.replace('MODEL', model))})\nend\n` +
      `done = function(summary, latency, requests)\n  local errors = summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout\n` +
      `  io.write(string.format('RESULT {"requests":%d,"duration_us":%d,"p50":%d,"p99":%d,"errors":%d,"non2xx":%d}\\n', summary.requests, summary.duration, latency:percentile(50), latency:percentile(99), errors, summary.errors.status))\nend\n`,
  );
  return file;
}

/**
 * Accounts with one key each, written straight into the database before the server starts (the CLI would take a
 * process per account). The request log's indexes start with the account, so rows of many accounts taking turns cost
 * more to insert than rows of one: this is what the "tenants" arm measures.
 */
async function createTenants(dataDir, count) {
  const { parseConfig } = await import('../dist/config/loader.js');
  const { openDatabase } = await import('../dist/db/connect.js');
  const { createAccount } = await import('../dist/accounts/service.js');
  const { createKey } = await import('../dist/keys/service.js');
  const { loadKeySecret } = await import('../dist/keys/secret.js');
  const database = await openDatabase(parseConfig({ server: { data_dir: dataDir } }, 'bench'));
  const secret = loadKeySecret(dataDir, undefined);
  const keys = [];
  try {
    for (let index = 0; index < count; index++) {
      await createAccount(database.db, { name: `tenant-${index}` });
      keys.push((await createKey(database.db, secret, { account: `tenant-${index}`, name: 'app' })).key);
    }
  } finally {
    await database.close();
  }
  return keys;
}

function runWrk(arm, connections, seconds, pinned = true) {
  const args = ['-t1', `-c${connections}`, `-d${seconds}s`, '--timeout', '10s', '-s', arm.script, arm.url];
  const output = pinned
    ? execFileSync('taskset', ['-c', '1', 'wrk', ...args], { encoding: 'utf8' })
    : execFileSync('wrk', args, { encoding: 'utf8' });
  const line = output.split('\n').find((text) => text.startsWith('RESULT '));
  if (!line) throw new Error(`wrk printed no result for ${arm.name}:\n${output}`);
  const result = JSON.parse(line.slice('RESULT '.length));
  return { ...result, rps: result.requests / (result.duration_us / 1e6), failed: result.errors + result.non2xx };
}

/**
 * One second of load right before each measured run, for every arm alike. The arms take turns, so each one has been
 * idle while the others were measured; a gateway that gives memory back when it goes quiet (Switchboard does, after
 * 5 s) then starts its run with some of its code to optimize again. What the runs measure is the steady state; what a
 * quiet period costs is measured separately (CPU per request at 300 req/s, after the streams and 30 s of quiet).
 */
function warmUp(arm) {
  runWrk(arm, 16, 1);
}

/** Busy and total clock ticks of the whole machine, from /proc/stat (its first line sums every core). */
function machineTicks() {
  const [user, nice, system, idle, iowait, irq, softirq, steal] = readFileSync('/proc/stat', 'utf8')
    .split('\n')[0]
    .trim()
    .split(/\s+/)
    .slice(1)
    .map(Number);
  const busy = user + nice + system + irq + softirq + steal;
  return { busy, total: busy + idle + iowait };
}

// ---------------------------------------------------------------- main
async function main() {
  if (!nginxBinary) throw new Error('nginx is not installed (bench/run.sh installs it)');
  const upstreamPort = port();
  startNginx(
    'upstream',
    '1',
    `  server {\n    listen 127.0.0.1:${upstreamPort};\n    location / {\n      default_type application/json;\n      return 200 '${fixture}';\n    }\n  }`,
  );
  const upstreamUrl = `http://127.0.0.1:${upstreamPort}`;
  await waitFor(`${upstreamUrl}/`);
  const streamMock = spawnTracked('taskset', [
    '-c',
    '1',
    process.execPath,
    path.join(root, 'bench/mock-upstream.mjs'),
    '0',
  ]);
  const streamPort = (await listening(streamMock)).port;
  const streamUrl = `http://127.0.0.1:${streamPort}`;

  const arms = [];
  arms.push({
    name: 'direct',
    url: `${upstreamUrl}/v1/chat/completions`,
    headers: {},
    model: 'mock',
    stream: { url: `${streamUrl}/v1/chat/completions`, headers: {}, model: 'stream-32-5' },
  });

  // A floor program on CPU 0 in front of `upstream`; resolves with its process and port once it listens.
  const startFloor = async (script, upstream) => {
    const child = spawnTracked('taskset', ['-c', '0', process.execPath, path.join(root, script), '0', upstream]);
    return { child, port: (await listening(child)).port };
  };
  const floor = await startFloor('bench/floor/server.mjs', upstreamUrl);
  const floorStream = await startFloor('bench/floor/server.mjs', streamUrl);
  arms.push({
    name: 'floor',
    pid: floor.child.pid,
    url: `http://127.0.0.1:${floor.port}/v1/chat/completions`,
    headers: {},
    model: 'mock',
    stream: { url: `http://127.0.0.1:${floorStream.port}/v1/chat/completions`, headers: {}, model: 'stream-32-5' },
  });
  // The same bare proxy calling undici the way Switchboard does (dispatch, not request): a stricter floor, reported
  // beside the one the targets use.
  const dispatchFloor = await startFloor('bench/floor/dispatch.mjs', upstreamUrl);
  arms.push({
    name: dispatchFloorName,
    pid: dispatchFloor.child.pid,
    url: `http://127.0.0.1:${dispatchFloor.port}/v1/chat/completions`,
    headers: {},
    model: 'mock',
  });

  if (!quick) {
    const proxyPort = port();
    startNginx(
      'proxy',
      '0',
      `  upstream backend {\n    server 127.0.0.1:${upstreamPort};\n    keepalive 256;\n  }\n  server {\n    listen 127.0.0.1:${proxyPort};\n    location / {\n      proxy_pass http://backend;\n      proxy_http_version 1.1;\n      proxy_set_header Connection "";\n      proxy_buffering off;\n    }\n  }`,
    );
    await waitFor(`http://127.0.0.1:${proxyPort}/`);
    arms.push({
      name: 'nginx proxy',
      url: `http://127.0.0.1:${proxyPort}/v1/chat/completions`,
      headers: {},
      model: 'mock',
    });
  }

  // Switchboard as shipped: a real key, request logging and metrics on, default settings.
  const dataDir = path.join(work, 'switchboard');
  const file = path.join(work, 'switchboard.yaml');
  const gatewayPort = port();
  const key = configureGateway({
    root,
    file,
    port: gatewayPort,
    dataDir,
    providers: [
      '  - name: nginx',
      '    type: openai',
      `    base_url: ${upstreamUrl}/v1`,
      '    api_key: sk-upstream',
      '  - name: streams',
      '    type: openai',
      `    base_url: ${streamUrl}/v1`,
    ],
    models: [
      '  - name: mock',
      '    provider: nginx',
      '    pricing: { input: 0.15, output: 0.6 }',
      '  - name: stream-32-5',
      '    provider: streams',
      '  - name: stream-64-100',
      '    provider: streams',
    ],
    keyName: 'wrk',
  });
  const tenantKeys = await createTenants(dataDir, tenantCount);
  const startSwitchboard = async (workers, pinned) => {
    const args = workers > 1 ? ['--workers', String(workers)] : [];
    return (await startGateway({ root, file, cpu: pinned ? 0 : undefined, args, children })).child;
  };
  const switchboard = await startSwitchboard(1, true);
  // Idle: started, settled, not yet served anything.
  await sleep(3000);
  const rssAtStart = (await rssReadings(switchboard.pid, { readings: 5 })).median;
  const auth = { authorization: `Bearer ${key}` };
  const switchboardArm = {
    name: 'switchboard',
    pid: switchboard.pid,
    url: `http://127.0.0.1:${gatewayPort}/v1/chat/completions`,
    headers: auth,
    model: 'mock',
    stream: { url: `http://127.0.0.1:${gatewayPort}/v1/chat/completions`, headers: auth, model: 'stream-32-5' },
  };
  arms.push(switchboardArm);
  // The same server, its requests taking turns among the keys of many accounts (throughput only).
  arms.push({
    name: tenantsArmName,
    pid: switchboard.pid,
    url: switchboardArm.url,
    headers: auth,
    model: 'mock',
    tenantKeys,
    throughputOnly: true,
  });

  if (withPeers) {
    try {
      const entry = installPortkey(log);
      const portkey = await startPortkey({ entry, port: port(), upstreamBaseUrl: `${upstreamUrl}/v1`, cpu: '0' });
      children.push(portkey.child);
      // Portkey as npm installs it answers every stream with 500; its streams are measured with the adapter fixed.
      // If that install cannot run, the streams go to Portkey as installed and the report shows how they fail.
      let stream = { url: portkey.url, headers: { ...portkey.headers, 'x-portkey-custom-host': `${streamUrl}/v1` } };
      let streamNote;
      try {
        const streaming = await startPortkey({
          entry: installPortkey(log, { withFixedAdapter: true }),
          port: port(),
          upstreamBaseUrl: `${streamUrl}/v1`,
          cpu: '0',
        });
        children.push(streaming.child);
        stream = { url: streaming.url, headers: streaming.headers };
        streamNote = `Portkey's streams are measured with @hono/node-server ${fixedHonoAdapter} instead of the 1.x its npm package installs, with which every stream fails with 500 (see \`bench/peers.mjs\`). Its stream handler also waits 25 ms (a \`setTimeout\`) before it forwards the first event from an OpenAI-style upstream, which its time to first token shows.`;
      } catch (error) {
        log(`Portkey with @hono/node-server ${fixedHonoAdapter} could not run: ${error.message}`);
      }
      arms.push({
        name: `Portkey ${portkeyVersion}`,
        url: portkey.url,
        headers: portkey.headers,
        model: 'mock',
        stream: { ...stream, model: 'stream-32-5' },
        streamNote,
      });
    } catch (error) {
      log(`Portkey could not run: ${error.message}`);
    }
    try {
      const binary = installLitellm(log);
      const litellm = await startLitellm({
        binary,
        port: port(),
        upstreamBaseUrl: `${upstreamUrl}/v1`,
        cpu: '0',
        workDir: work,
      });
      children.push(litellm.child);
      const litellmStream = await startLitellm({
        binary,
        port: port(),
        upstreamBaseUrl: `${streamUrl}/v1`,
        cpu: '0',
        workDir: path.join(work),
      });
      children.push(litellmStream.child);
      arms.push({
        name: `LiteLLM ${litellmVersion}`,
        url: litellm.url,
        headers: litellm.headers,
        model: 'mock',
        stream: { url: litellmStream.url, headers: litellmStream.headers, model: 'mock' },
      });
    } catch (error) {
      log(`LiteLLM could not run: ${error.message}`);
    }
  }
  for (const arm of arms) {
    const name = arm.name.replace(/\W+/g, '-');
    arm.script = arm.tenantKeys
      ? wrkScriptTakingTurns(name, arm.model, arm.tenantKeys)
      : wrkScript(name, arm.model, arm.headers);
  }

  log(`arms: ${arms.map((arm) => arm.name).join(', ')}; warming up`);
  for (const arm of arms) runWrk(arm, 16, quick ? 1 : 2);

  // Non-streaming: latency at c=1 and saturation at c=64, arms alternating within each round.
  const results = Object.fromEntries(arms.map((arm) => [arm.name, { c1: [], c64: [] }]));
  for (let round = 1; round <= rounds; round++) {
    for (const arm of arms.filter((candidate) => !candidate.throughputOnly)) {
      log(`round ${round}/${rounds}: ${arm.name} latency at c=1`);
      warmUp(arm);
      results[arm.name].c1.push(runWrk(arm, 1, latencySeconds));
    }
    for (const arm of arms.filter((candidate) => pairedRounds === 0 || !isPaired(candidate))) {
      log(`round ${round}/${rounds}: ${arm.name} throughput at c=64`);
      // The process's CPU time per request (every thread) alongside: requests per second also count the time the
      // process waited for its core, CPU time does not (on a busy host both move: contention slows the CPU too).
      warmUp(arm);
      const before = arm.pid ? cpuMicrosOf(arm.pid) : 0;
      const run = runWrk(arm, 64, saturationSeconds);
      if (arm.pid) run.cpuPerRequest = (cpuMicrosOf(arm.pid) - before) / run.requests;
      results[arm.name].c64.push(run);
    }
  }
  const paired = [];
  const pair = arms.filter(isPaired);
  for (let round = 1; round <= pairedRounds; round++) {
    log(`paired round ${round}/${pairedRounds}: floor and switchboard throughput at c=64`);
    const runs = {};
    // Each goes first in every other round.
    for (const arm of round % 2 === 1 ? pair : [...pair].reverse()) {
      warmUp(arm);
      const before = cpuMicrosOf(arm.pid);
      const run = runWrk(arm, 64, pairedSeconds);
      run.cpuPerRequest = (cpuMicrosOf(arm.pid) - before) / run.requests;
      results[arm.name].c64.push(run);
      runs[arm.name] = run;
    }
    paired.push({
      rps: runs.switchboard.rps / runs.floor.rps,
      cpu: runs.floor.cpuPerRequest / runs.switchboard.cpuPerRequest,
    });
  }
  const direct = results.direct;
  const summary = {};
  for (const arm of arms) {
    const result = results[arm.name];
    const added50 = result.c1.map((run, index) => run.p50 - direct.c1[index].p50);
    const added99 = result.c1.map((run, index) => run.p99 - direct.c1[index].p99);
    summary[arm.name] = {
      added50,
      added99,
      rps: result.c64.map((run) => run.rps),
      cpu: result.c64.filter((run) => run.cpuPerRequest !== undefined).map((run) => run.cpuPerRequest),
      failed: [...result.c1, ...result.c64].reduce((sum, run) => sum + run.failed, 0),
    };
  }

  // Streaming: time to first token and gaps between chunks, one stream at a time.
  const streaming = {};
  for (const arm of arms.filter((candidate) => candidate.stream)) {
    log(`${arm.name}: ${quick ? 20 : 100} streams of 32 chunks 5 ms apart`);
    try {
      streaming[arm.name] = await measureStreams({
        url: arm.stream.url,
        headers: arm.stream.headers,
        body: { model: arm.stream.model, stream: true, messages: [{ role: 'user', content: 'hi' }] },
        count: quick ? 20 : 100,
      });
    } catch (error) {
      // A peer that cannot stream through this setup is reported as such, not left out.
      log(`${arm.name} could not stream: ${error.message}`);
      streaming[arm.name] = { error: error.message.slice(0, 120) };
    }
  }

  // Memory: idle, 1,000 concurrent streams, 30 s after.
  const memory = {};
  if (!quick) {
    memory.idle = rssAtStart;
    memory.afterThroughput = rssOf(switchboard.pid);
    log('1,000 concurrent streams of 64 chunks 100 ms apart through Switchboard');
    const held = await holdStreams({
      url: switchboardArm.url,
      headers: auth,
      body: { model: 'stream-64-100', stream: true, messages: [{ role: 'user', content: 'hi' }] },
      count: 1000,
      // The median of 11 readings over the 2 s after the last stream opened (each lasts 6.4 s): see rssReadings.
      onAllOpen: async (endedSoFar) => {
        return { ...(await rssReadings(switchboard.pid)), ended: endedSoFar() };
      },
    });
    memory.atPeak = held.sample.median;
    memory.atPeakRange = [held.sample.min, held.sample.max];
    memory.endedWhileRead = held.sample.ended;
    memory.failures = held.failures;
    await sleep(30_000);
    memory.after = (await rssReadings(switchboard.pid, { readings: 5 })).median;
    log(
      `RSS idle ${memory.idle.toFixed(0)} MB, after the throughput runs ${memory.afterThroughput.toFixed(0)} MB, 1,000 streams ${memory.atPeak.toFixed(0)} MB, 30 s after ${memory.after.toFixed(0)} MB`,
    );
  }

  // CPU per request at everyday rates (300 and 30 requests/s), the floor and Switchboard measured at the same time
  // (bench/fixed-rate.mjs). In the full run this follows the 1,000 streams and 30 s of quiet.
  log('CPU per request at 300 and 30 requests/s, floor and Switchboard at the same time');
  const fixedRateArms = arms.filter(isPaired).map((arm) => ({
    name: arm.name,
    url: arm.url,
    headers: arm.headers,
    pid: arm.pid,
    body: requestBody.replace('MODEL', arm.model),
  }));
  const fixedRate = await pairedFixedRate({
    arms: fixedRateArms,
    rates: fixedRates,
    seconds: quick ? 4 : 8,
    // The median of the per-window ratios: a single window moves by ±10% with the machine.
    rounds: 5,
    // With pairedFixedRate's own 3 s at 500/s, long enough for the code optimized away during the quiet spells before
    // (the other arms' runs) to be compiled again: the steady state is what is measured; why a quiet spell costs a
    // recompilation: docs/performance.md#idle-memory.
    warmUpSeconds: 3,
    log,
  });
  const cpu = Object.fromEntries(fixedRates.map((rate) => [rate, summarizeFixedRate(fixedRate[rate], 'floor')]));

  // /v1/responses against /v1/chat/completions on the same server: the same prompt and upstream answer.
  const responses = await compareResponsesCpu(switchboardArm, quick ? 3 : 5, quick ? 3 : 5);

  // Workers: 1 vs 2 processes, unpinned, alternating (a single pair of runs swung the ratio by ±0.1). The machine's
  // busy share says whether the cores allowed more: wrk and nginx run on the same two cores.
  const workers = { 1: [], 2: [], busy: { 1: [], 2: [] } };
  if (!quick) {
    for (const child of [switchboard]) child.kill('SIGTERM');
    await sleep(1500);
    for (let round = 0; round < rounds; round++) {
      for (const count of [1, 2]) {
        const child = await startSwitchboard(count, false);
        await sleep(1000);
        runWrk(switchboardArm, 16, 2, false);
        const before = machineTicks();
        workers[count].push(runWrk(switchboardArm, 64, saturationSeconds, false).rps);
        const after = machineTicks();
        workers.busy[count].push((after.busy - before.busy) / (after.total - before.total));
        child.kill('SIGTERM');
        await sleep(1500);
      }
    }
    log(
      `workers: 1 → ${median(workers[1]).toFixed(0)} req/s, 2 → ${median(workers[2]).toFixed(0)} req/s (machine ${(100 * median(workers.busy[2])).toFixed(0)}% busy)`,
    );
  }

  // Idle (the full run): bench/idle.mjs on SQLite, and on PostgreSQL with Redis when SWITCHBOARD_BENCH_POSTGRES_URL
  // names a server it may create a database on.
  const idle = [];
  if (!quick) {
    const postgres = process.env.SWITCHBOARD_BENCH_POSTGRES_URL;
    for (const args of [[], ...(postgres ? [['--postgres', postgres, '--redis']] : [])]) {
      log(`idle gateway${args.length ? ' on PostgreSQL with Redis' : ' on SQLite'}: 30 s to settle, 60 s watched`);
      try {
        const output = execFileSync(process.execPath, [path.join(root, 'bench/idle.mjs'), ...args], {
          encoding: 'utf8',
          stdio: ['ignore', 'pipe', 'inherit'],
        });
        idle.push(JSON.parse(output.trim().split('\n').at(-1)));
      } catch (error) {
        log(`the idle measurement failed: ${error.message}`);
      }
    }
  }

  writeReport({ arms, summary, streaming, memory, cpu, workers, paired, responses, idle });
}

/**
 * CPU per request of one Switchboard process at saturation (c=64) for the same prompt sent as a chat completion and
 * as a Responses request (stored, the default, and with store: false), in rounds whose order alternates. The translated
 * Responses call does more by nature (translation both ways, the response object, the stored record): the target is
 * at most 1.15 × chat's CPU.
 */
async function compareResponsesCpu(chatArm, rounds, seconds) {
  const input = 'Hello! '.repeat(120);
  const responsesUrl = chatArm.url.replace('/v1/chat/completions', '/v1/responses');
  const variants = [
    { name: 'chat completions', url: chatArm.url, body: requestBody.replace('MODEL', 'mock') },
    { name: 'responses, store: true', url: responsesUrl, body: JSON.stringify({ model: 'mock', input }) },
    {
      name: 'responses, store: false',
      url: responsesUrl,
      body: JSON.stringify({ model: 'mock', input, store: false }),
    },
  ].map((variant) => ({
    ...variant,
    pid: chatArm.pid,
    headers: chatArm.headers,
    script: wrkScript(`cpu-${variant.name.replace(/\W+/g, '-')}`, 'mock', chatArm.headers, variant.body),
  }));
  const cpu = Object.fromEntries(variants.map((variant) => [variant.name, []]));
  let failed = 0;
  for (let round = 0; round < rounds; round++) {
    for (const variant of round % 2 === 0 ? variants : [...variants].reverse()) {
      log(`round ${round + 1}/${rounds}: CPU per request, ${variant.name}`);
      warmUp(variant);
      const before = cpuMicrosOf(variant.pid);
      const run = runWrk(variant, 64, seconds);
      cpu[variant.name].push((cpuMicrosOf(variant.pid) - before) / run.requests);
      failed += run.failed ?? 0;
    }
  }
  const chat = median(cpu['chat completions']);
  log(
    `responses CPU per request: ${variants.map((variant) => `${variant.name} ${median(cpu[variant.name]).toFixed(1)} µs`).join(', ')}; ratios ${(median(cpu['responses, store: true']) / chat).toFixed(2)} / ${(median(cpu['responses, store: false']) / chat).toFixed(2)}`,
  );
  return { cpu, failed };
}

/** The two arms bench:quick measures in paired rounds (see pairedRounds). */
function isPaired(arm) {
  return arm.name === 'floor' || arm.name === 'switchboard';
}

function writeReport({ arms, summary, streaming, memory, cpu, workers, paired, responses, idle }) {
  const sb = summary.switchboard;
  const fl = summary.floor;
  const rpsOf = (name) => median(summary[name].rps);
  // With paired rounds, the shares are the medians of the per-round ratios, and their range is printed beside them.
  const shares =
    paired.length > 0
      ? {
          floorShare: median(paired.map((round) => round.rps)),
          floorShareRange: [
            Math.min(...paired.map((round) => round.rps)),
            Math.max(...paired.map((round) => round.rps)),
          ],
          cpuShare: median(paired.map((round) => round.cpu)),
        }
      : { floorShare: rpsOf('switchboard') / rpsOf('floor'), cpuShare: cpuShare(summary) };
  const lines = [];
  lines.push('## Switchboard and its peers, side by side', '');
  lines.push(
    `Measured by \`npm run bench\`${quick ? ' (quick mode)' : ''} on ${new Date().toISOString().slice(0, 10)}: ${cpus().length} × ${cpus()[0]?.model ?? 'CPU'}, Node ${process.version};`,
    `${rounds} round${rounds > 1 ? 's' : ''}, arms alternating within each round; medians, with the range over rounds. Method: \`../shared/reference/benchmark-method.md\`.`,
    'Every gateway is pinned to CPU 0; the upstream (nginx returning a 1.4 KB `chat.completion`), the streaming mock',
    '(`bench/mock-upstream.mjs`) and wrk are pinned to CPU 1. Switchboard runs as shipped: a real key, request logging to',
    'SQLite and metrics on. The floor (`bench/floor/server.mjs`) is node:http + undici (`Pool.request`) with no features at all;',
    "`floor, undici dispatch` (`bench/floor/dispatch.mjs`) is the same with undici's `dispatch`, as Switchboard calls it.",
    '',
    '| System | added p50 @c=1 | added p99 @c=1 | RPS @c=64 | vs floor | Switchboard ÷ it | errors |',
    '|---|---|---|---|---|---|---|',
  );
  for (const arm of arms) {
    const row = summary[arm.name];
    const rps = rpsOf(arm.name);
    const noLatency = arm.name === 'direct' || arm.throughputOnly;
    lines.push(
      `| ${arm.name} | ${noLatency ? '—' : `${median(row.added50).toFixed(0)} µs (${range(row.added50)})`} | ${noLatency ? '—' : `${median(row.added99).toFixed(0)} µs`} | ${rps.toFixed(0)} (${range(row.rps)}) | ${((100 * rps) / rpsOf('floor')).toFixed(0)}% | ${arm.name === 'switchboard' ? '—' : `${(rpsOf('switchboard') / rps).toFixed(2)}×`} | ${row.failed} |`,
    );
  }
  lines.push(
    '',
    `\`${tenantsArmName}\` is the same Switchboard with each request made with the key of another of ${tenantCount} accounts, in turn`,
    "(the request log's indexes start with the account, so many accounts' rows cost more to insert than one account's).",
  );
  lines.push('', '### Streaming (one stream at a time, 32 chunks 5 ms apart)', '');
  lines.push(
    '| System | TTFT p50 | TTFT p99 | added TTFT p50 / p99 | inter-chunk gap p50 / p99 | reads carrying >1 chunk |',
    '|---|---|---|---|---|---|',
  );
  const directStream = streaming.direct;
  for (const [name, result] of Object.entries(streaming)) {
    if (result.error) {
      lines.push(`| ${name} | failed: ${result.error.replaceAll('|', '/')} | | | | |`);
      continue;
    }
    lines.push(
      `| ${name} | ${(result.ttft.p50 / 1000).toFixed(2)} ms | ${(result.ttft.p99 / 1000).toFixed(2)} ms | ${name === 'direct' ? '—' : `${((result.ttft.p50 - directStream.ttft.p50) / 1000).toFixed(2)} / ${((result.ttft.p99 - directStream.ttft.p99) / 1000).toFixed(2)} ms`} | ${(result.gap.p50 / 1000).toFixed(2)} / ${(result.gap.p99 / 1000).toFixed(2)} ms | ${result.batchedReads} of ${result.reads} |`,
    );
  }
  const streamNotes = arms.filter((arm) => arm.streamNote && streaming[arm.name]).map((arm) => arm.streamNote);
  if (streamNotes.length > 0) lines.push('', ...streamNotes);
  lines.push('', '### Memory and CPU', '', '| Measure | Value |', '|---|---|');
  if (memory.idle) {
    lines.push(`| Switchboard RSS idle (started, nothing served yet) | ${memory.idle.toFixed(0)} MB |`);
    lines.push(`| Switchboard RSS right after the throughput runs | ${memory.afterThroughput.toFixed(0)} MB |`);
    lines.push(
      `| Switchboard RSS with 1,000 concurrent streams open (median of 11 readings over the 2 s after the last opened) | ${memory.atPeak.toFixed(0)} MB (${range(memory.atPeakRange)}; ${memory.failures} failed streams, ${memory.endedWhileRead} ended before the last reading) |`,
    );
    lines.push(
      `| Switchboard RSS 30 s after the streams ended | ${memory.after.toFixed(0)} MB (${(((memory.after - memory.idle) / memory.idle) * 100).toFixed(0)}% over idle) |`,
    );
  }
  for (const rate of fixedRates) {
    for (const [name, row] of Object.entries(cpu[rate]))
      lines.push(
        `| CPU per request at ${rate} req/s (every thread; event loop), ${name} | ${row.total.toFixed(0)} µs; ${row.main.toFixed(0)} µs${name === 'floor' ? '' : ` (${row.ratio.toFixed(2)}× the floor: median of the ratios per window, ${row.ratios.map((ratio) => ratio.toFixed(2)).join(', ')})`} |`,
      );
  }
  for (const arm of arms.filter((candidate) => summary[candidate.name].cpu.length > 0))
    lines.push(
      `| CPU per request at saturation (c=64, every thread), ${arm.name} | ${median(summary[arm.name].cpu).toFixed(1)} µs (${range(summary[arm.name].cpu, 1)}) |`,
    );
  lines.push(
    `| (not a target) floor's CPU per request at saturation ÷ Switchboard's | ${(100 * cpuShare(summary)).toFixed(0)}% |`,
  );
  for (const [name, values] of Object.entries(responses.cpu))
    lines.push(
      `| CPU per request at saturation (c=64), Switchboard, ${name} (${values.length} alternating rounds) | ${median(values).toFixed(1)} µs (${range(values, 1)}) |`,
    );
  if (workers[1].length > 0) {
    lines.push(
      `| RPS @c=64 unpinned, 1 worker / 2 workers (medians of ${workers[1].length} alternating runs) | ${median(workers[1]).toFixed(0)} (${range(workers[1])}) / ${median(workers[2]).toFixed(0)} (${range(workers[2])}): ${(median(workers[2]) / median(workers[1])).toFixed(2)}× |`,
      `| Machine busy during those runs (both cores; wrk and nginx share them), 1 worker / 2 workers | ${(100 * median(workers.busy[1])).toFixed(0)}% / ${(100 * median(workers.busy[2])).toFixed(0)}% |`,
    );
  }
  const targets = [
    [
      'throughput ≥ 70% of the floor (request log on)',
      shares.floorShare >= 0.7,
      `${(100 * shares.floorShare).toFixed(0)}%${paired.length > 0 ? ` (median of ${paired.length} paired rounds, ${(100 * shares.floorShareRange[0]).toFixed(0)}–${(100 * shares.floorShareRange[1]).toFixed(0)}%)` : ''}`,
    ],
    [
      `(stricter, not a target) throughput vs ${dispatchFloorName}`,
      rpsOf('switchboard') >= 0.8 * rpsOf(dispatchFloorName),
      `${((100 * rpsOf('switchboard')) / rpsOf(dispatchFloorName)).toFixed(0)}%`,
    ],
    [
      "added p50 ≤ 1.25 × the floor's",
      median(sb.added50) <= 1.25 * median(fl.added50),
      `${(median(sb.added50) / median(fl.added50)).toFixed(2)}×`,
    ],
  ];
  // Issue 26's bars: 15× Portkey's throughput, 50× LiteLLM's.
  for (const arm of arms.filter((candidate) => /Portkey|LiteLLM/.test(candidate.name))) {
    const multiple = /LiteLLM/.test(arm.name) ? 50 : 15;
    targets.push([
      `≥ ${multiple}× ${arm.name}'s throughput`,
      rpsOf('switchboard') >= multiple * rpsOf(arm.name),
      `${(rpsOf('switchboard') / rpsOf(arm.name)).toFixed(1)}×`,
    ]);
    targets.push([
      `lower added p50 and p99 than ${arm.name}`,
      median(sb.added50) < median(summary[arm.name].added50) && median(sb.added99) < median(summary[arm.name].added99),
      `${median(sb.added50).toFixed(0)} / ${median(sb.added99).toFixed(0)} µs vs ${median(summary[arm.name].added50).toFixed(0)} / ${median(summary[arm.name].added99).toFixed(0)} µs`,
    ]);
  }
  if (streaming.switchboard && directStream) {
    const addedP99 = (streaming.switchboard.ttft.p99 - directStream.ttft.p99) / 1000;
    targets.push(['added TTFT p99 ≤ 1 ms', addedP99 <= 1, `${addedP99.toFixed(2)} ms`]);
    // A read carrying two chunks can also come from the client reading late (the floor, which writes each chunk the
    // moment it arrives, shows it too): batching is judged against the floor, not against zero.
    // test/streaming-timing.test.ts checks chunk-by-chunk forwarding deterministically.
    const floorBatched = streaming.floor?.batchedReads ?? 0;
    targets.push([
      'chunks forwarded one by one (no more reads carrying several chunks than the floor)',
      streaming.switchboard.batchedReads <= Math.max(1, streaming.direct.batchedReads, floorBatched),
      `${streaming.switchboard.batchedReads} batched reads (floor ${floorBatched}, direct ${streaming.direct.batchedReads})`,
    ]);
  }
  for (const [rate, bound] of [
    [300, 1.5],
    [30, 2],
  ]) {
    const ratio = cpu[rate].switchboard.ratio;
    targets.push([`CPU per request at ${rate} req/s ≤ ${bound}× the floor's`, ratio <= bound, `${ratio.toFixed(2)}×`]);
  }
  if (memory.idle) {
    targets.push(['RSS ≤ 150 MB at 1,000 streams', memory.atPeak <= 150, `${memory.atPeak.toFixed(0)} MB`]);
    targets.push([
      'RSS back within 10% of idle 30 s later',
      memory.after <= memory.idle * 1.1,
      `${memory.after.toFixed(0)} vs ${memory.idle.toFixed(0)} MB`,
    ]);
  }
  for (const run of idle) {
    const where = run.redis ? `${run.database} with Redis` : run.database;
    const writes =
      run.database === 'sqlite' ? run.sqliteFilesChanged.length + run.sqliteCommitsSeen : run.postgresRowsWritten;
    targets.push([
      `idle (${where}, ${run.seconds} s after 30 s of quiet): ≤ 0.5% of a core, no database writes`,
      run.cpuPercent <= 0.5 && writes === 0,
      `${run.cpuPercent}% (event loop ${run.mainThreadPercent}%, ${run.eventLoopWakeupsPerSecond} wake-ups/s); ${run.database === 'sqlite' ? `files changed: ${run.sqliteFilesChanged.length}, commits: ${run.sqliteCommitsSeen}` : `rows written: ${run.postgresRowsWritten}, statements: ${run.postgresTransactions} in ${run.postgresWindowSeconds} s; Redis commands: ${run.redisCommands}`}`,
    ]);
  }
  if (workers[1].length > 0)
    targets.push([
      '2 workers ≥ 1.6 × 1 worker',
      median(workers[2]) >= 1.6 * median(workers[1]),
      `${(median(workers[2]) / median(workers[1])).toFixed(2)}× (machine ${(100 * median(workers.busy[2])).toFixed(0)}% busy with 2)`,
    ]);
  const chatCpu = median(responses.cpu['chat completions']);
  for (const name of ['responses, store: true', 'responses, store: false']) {
    const ratio = median(responses.cpu[name]) / chatCpu;
    targets.push([
      `/v1/${name} CPU per request ≤ 1.15 × /v1/chat/completions'`,
      ratio <= 1.15 && responses.failed === 0,
      `${ratio.toFixed(2)}×${responses.failed > 0 ? ` (${responses.failed} failed requests)` : ''}`,
    ]);
  }
  targets.push([
    `(not a target) throughput with ${tenantCount} tenants in turn ÷ with one`,
    true,
    `${((100 * rpsOf(tenantsArmName)) / rpsOf('switchboard')).toFixed(0)}%`,
  ]);
  lines.push('', '### Targets', '', '| Target | Met | Measured |', '|---|---|---|');
  for (const [target, met, measured] of targets)
    lines.push(`| ${target} | ${target.startsWith('(not a target)') ? '—' : met ? 'yes' : '**no**'} | ${measured} |`);
  lines.push('', '![Added latency and throughput per system](benchmarks-chart.svg)');
  if (quick) {
    // The quick run is a check for whoever changes the hot path, not a figure for the docs.
    process.stderr.write(`\n${lines.join('\n')}\n\n`);
  } else {
    writeSection('compare', lines.join('\n'));
    writeChart(arms, summary);
    log('wrote docs/benchmarks.md and docs/benchmarks-chart.svg');
  }
  if (paired.length > 0) {
    process.stderr.write(
      `paired rounds, Switchboard's throughput over the floor's: ${paired.map((round) => round.rps.toFixed(2)).join(' ')} (median ${shares.floorShare.toFixed(2)}); the floor's CPU per request over Switchboard's: ${paired.map((round) => round.cpu.toFixed(2)).join(' ')} (median ${shares.cpuShare.toFixed(2)})\n`,
    );
  }
  process.stdout.write(
    `${JSON.stringify({ ...shares, dispatchFloorShare: rpsOf('switchboard') / rpsOf(dispatchFloorName), tenantsShare: rpsOf(tenantsArmName) / rpsOf('switchboard'), addedP50: median(sb.added50), floorAddedP50: median(fl.added50), cpuAt300: cpu[300].switchboard.ratio, cpuAt30: cpu[30].switchboard.ratio })}\n`,
  );
}

/** The floor's CPU time per request at saturation over Switchboard's (medians): its share of the floor by CPU. */
function cpuShare(summary) {
  return median(summary.floor.cpu) / median(summary.switchboard.cpu);
}

/** Two horizontal bar charts (added p50 latency, RPS at c=64) as a dependency-free SVG. */
function writeChart(arms, summary) {
  const systems = arms.filter((arm) => arm.name !== 'direct').map((arm) => arm.name);
  const latencySystems = arms.filter((arm) => arm.name !== 'direct' && !arm.throughputOnly).map((arm) => arm.name);
  const width = 760;
  const rowHeight = 26;
  const panelHeight = 40 + systems.length * rowHeight;
  const bar = (systems, values, title, unit, offsetY) => {
    const max = Math.max(...values, 1);
    const rows = systems.map((name, index) => {
      const value = values[index];
      const length = Math.max(2, (value / max) * 400);
      const y = offsetY + 30 + index * rowHeight;
      const color = name.startsWith('switchboard') ? '#2563eb' : name === 'floor' ? '#64748b' : '#94a3b8';
      // Labels right-aligned at x=240: room for the longest arm name ("switchboard, 100 tenants in turn").
      return `<text x="240" y="${y + 14}" text-anchor="end" font-size="13">${name}</text><rect x="250" y="${y}" width="${length.toFixed(1)}" height="18" fill="${color}"/><text x="${(256 + length).toFixed(1)}" y="${y + 14}" font-size="12">${value.toFixed(0)} ${unit}</text>`;
    });
    return `<text x="10" y="${offsetY + 18}" font-size="15" font-weight="bold">${title}</text>${rows.join('')}`;
  };
  const latency = latencySystems.map((name) => Math.max(0, median(summary[name].added50)));
  const throughput = systems.map((name) => median(summary[name].rps));
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${panelHeight * 2 + 10}" font-family="sans-serif">
<title>Switchboard and its peers: added latency p50 at c=1 and requests per second at c=64</title>
<rect width="100%" height="100%" fill="white"/>
${bar(latencySystems, latency, 'Added latency p50 at c=1 (lower is better)', 'µs', 0)}
${bar(systems, throughput, 'Requests per second at c=64 (higher is better)', 'rps', panelHeight)}
</svg>
`;
  writeFileSync(path.join(root, 'docs', 'benchmarks-chart.svg'), svg);
}

main()
  .then(() => process.exit(0))
  .catch((error) => {
    log(error.stack ?? String(error));
    process.exit(1);
  });
