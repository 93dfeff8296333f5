// The peer gateways the benchmark runs side by side with Switchboard, installed on first use into bench/.peers/
// (never committed): the Portkey gateway from npm, the LiteLLM proxy from PyPI in a virtualenv, each with the
// settings their own docs recommend for speed (../shared/reference/benchmark-method.md). LiteLLM is pinned to the
// newest release whose dependencies the package index here can satisfy (1.101 and later need certifi 2026.10.19).
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const peersDir = path.join(root, 'bench', '.peers');
export const portkeyVersion = '1.15.2';
export const litellmVersion = '1.100.5';
/** The first @hono/node-server that gives a Response built from a fetched one headers of its own (see installPortkey). */
export const fixedHonoAdapter = '2.1.9';

function run(command, args, options = {}) {
  execFileSync(command, args, { stdio: ['ignore', 'ignore', 'inherit'], ...options });
}

/**
 * The Portkey gateway as npm installs it. Its streams all fail with 500 ("Something went wrong"; its log says
 * "TypeError: immutable"): the @hono/node-server 1.x that its `^1.3.3` range resolves to gives a Response built from
 * a fetched one (Portkey's `new Response(stream, upstreamResponse)`) the upstream's immutable Headers, and Portkey then
 * appends its own headers to them. `withFixedAdapter` installs the same Portkey with @hono/node-server
 * ${fixedHonoAdapter} (which copies the headers) through an npm override: the benchmark measures Portkey's streams with
 * that install and everything else with the one npm gives.
 */
export function installPortkey(log, { withFixedAdapter = false } = {}) {
  const directory = path.join(peersDir, withFixedAdapter ? 'portkey-fixed-adapter' : 'portkey');
  const entry = path.join(directory, 'node_modules', '@portkey-ai', 'gateway', 'build', 'start-server.js');
  if (existsSync(entry)) return entry;
  log(
    `installing the Portkey gateway ${portkeyVersion} from npm${withFixedAdapter ? ` with @hono/node-server ${fixedHonoAdapter}` : ''}`,
  );
  mkdirSync(directory, { recursive: true });
  const manifest = { private: true, ...(withFixedAdapter && { overrides: { '@hono/node-server': fixedHonoAdapter } }) };
  writeFileSync(path.join(directory, 'package.json'), `${JSON.stringify(manifest)}\n`);
  run('npm', ['install', '--no-audit', '--no-fund', `@portkey-ai/gateway@${portkeyVersion}`], { cwd: directory });
  return entry;
}

export function installLitellm(log) {
  const venv = path.join(peersDir, 'litellm-venv');
  const binary = path.join(venv, 'bin', 'litellm');
  if (existsSync(binary)) return binary;
  log(`installing the LiteLLM proxy ${litellmVersion} from PyPI (a few minutes)`);
  mkdirSync(peersDir, { recursive: true });
  run('python3', ['-m', 'venv', venv]);
  run(path.join(venv, 'bin', 'pip'), [
    'install',
    '--quiet',
    '--disable-pip-version-check',
    `litellm[proxy]==${litellmVersion}`,
  ]);
  return binary;
}

async function waitForHttp(url, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      await fetch(url);
      return;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
  throw new Error(`${url} did not come up within ${timeoutMs / 1000} s`);
}

/** Starts Portkey pinned to `cpu`; requests need its routing headers. */
export async function startPortkey({ entry, port, upstreamBaseUrl, cpu }) {
  const child = spawn('taskset', ['-c', cpu, process.execPath, entry, `--port=${port}`], { stdio: 'ignore' });
  await waitForHttp(`http://127.0.0.1:${port}/`, 60_000);
  return {
    child,
    url: `http://127.0.0.1:${port}/v1/chat/completions`,
    headers: {
      'x-portkey-provider': 'openai',
      'x-portkey-custom-host': upstreamBaseUrl,
      authorization: 'Bearer sk-mock',
    },
  };
}

/** Pins a process and every process under it (LiteLLM's workers) to one CPU. */
function pinTree(pid, cpu) {
  const pids = [pid];
  for (let index = 0; index < pids.length; index++) {
    try {
      const children = execFileSync('pgrep', ['-P', String(pids[index])], { encoding: 'utf8' })
        .trim()
        .split('\n');
      pids.push(...children.filter(Boolean).map(Number));
    } catch {}
  }
  for (const each of pids) execFileSync('taskset', ['-a', '-cp', cpu, String(each)], { stdio: 'ignore' });
}

/**
 * Starts the LiteLLM proxy with no database and LITELLM_LOG=ERROR; it starts unpinned (its start-up compiles
 * a lot of Python and takes minutes on one busy core) and is pinned to `cpu` once it answers. `track` receives the
 * process at once, so it is stopped even when it never comes up.
 */
export async function startLitellm({ binary, port, upstreamBaseUrl, cpu, workDir, track }) {
  const config = path.join(workDir, 'litellm.yaml');
  writeFileSync(
    config,
    `model_list:\n  - model_name: mock\n    litellm_params:\n      model: openai/mock\n      api_base: ${upstreamBaseUrl}\n      api_key: sk-mock\n`,
  );
  const child = spawn(binary, ['--config', config, '--port', String(port), '--num_workers', '2'], {
    stdio: 'ignore',
    env: { ...process.env, LITELLM_LOG: 'ERROR' },
    detached: true,
  });
  track?.(child);
  await waitForHttp(`http://127.0.0.1:${port}/health/liveliness`, 300_000);
  pinTree(child.pid, cpu);
  return { child, url: `http://127.0.0.1:${port}/v1/chat/completions`, headers: { authorization: 'Bearer sk-mock' } };
}
