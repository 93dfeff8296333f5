// Setting up and starting the Switchboard a benchmark measures, the same way in every script: a config with the same
// head (warnings-only log), an account and key made by the CLI of the build under test (so that a --root build
// writes its own database), and `serve --json` through the bin/switchboard launcher as installed, pinned to a core.
// A script that set one of these differently would measure another thing than its neighbours.
import { execFileSync, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { listening } from './process-tools.mjs';

/**
 * Writes the config `file` of a gateway listening on `port` (0: any free port) with its data in `dataDir`, on
 * PostgreSQL and with Redis when their URLs are given, then creates `account` and a key named `keyName` in it with
 * the CLI of the build in `root`. `providers` and `models` are the YAML lines under those keys, as written. Returns
 * the key's secret.
 */
export function configureGateway({
  root,
  file,
  port = 0,
  dataDir,
  databaseUrl,
  redisUrl,
  providers,
  models,
  account = 'bench',
  keyName = account,
}) {
  writeFileSync(
    file,
    [
      'server:',
      `  port: ${port}`,
      `  data_dir: ${dataDir}`,
      ...(databaseUrl ? ['database:', `  url: ${databaseUrl}`] : []),
      ...(redisUrl ? ['redis:', `  url: ${redisUrl}`] : []),
      'logging:',
      '  level: warn',
      'providers:',
      ...providers,
      'models:',
      ...models,
      '',
    ].join('\n'),
  );
  const cli = (...args) =>
    execFileSync(process.execPath, [path.join(root, 'bin/switchboard.js'), ...args, '--config', file], {
      encoding: 'utf8',
    });
  cli('accounts', 'create', account);
  return JSON.parse(cli('keys', 'create', '--account', account, '--name', keyName, '--json')).key;
}

/**
 * Starts `bin/switchboard serve --config <file> --json` of the build in `root` (the launcher: glibc's malloc
 * thresholds, then exec node, so the pid is Node's), on core `cpu` when given (taskset), with `args` after those and
 * `env` over this process's environment. The child goes onto `children` at once, so that the caller's exit handler
 * stops it even while it starts. Resolves once it listens, with the child and its listening line's port and url.
 */
export async function startGateway({ root, file, cpu, args = [], env, children }) {
  const launcher = path.join(root, 'bin/switchboard');
  const serve = ['serve', '--config', file, '--json', ...args];
  const child = spawn(
    cpu === undefined ? launcher : 'taskset',
    cpu === undefined ? serve : ['-c', String(cpu), launcher, ...serve],
    { stdio: ['ignore', 'pipe', 'inherit'], ...(env ? { env: { ...process.env, ...env } } : {}) },
  );
  children.push(child);
  const { port, url } = await listening(child);
  return { child, port, url };
}
