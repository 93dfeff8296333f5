import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type CliResult, type RunCliOptions, runCli, switchboardBin, unprivileged } from './support/cli.js';
import { killStrayServes, startServeProcess, writeConfigFile } from './support/serve-process.js';
import { waitFor } from './support/wait.js';

/**
 * What `serve` and the other commands do in an environment that will not have them: a data directory that cannot be
 * created or written, a port that is taken, privileged or not this machine's. One line naming the problem, a non-zero
 * exit, no stack trace, no hang, and nothing left behind that stops the next start. Bad arguments are in
 * cli-bad-input.test.ts.
 */

const directories: string[] = [];
afterAll(async () => {
  await killStrayServes();
  for (const directory of directories) rmSync(directory, { recursive: true, force: true });
});

/** A directory of its own that `nobody` may enter (mode 0755), where no configuration file is found. */
function scratch(): string {
  const directory = mkdtempSync(path.join(tmpdir(), 'switchboard-environment-'));
  chmodSync(directory, 0o755);
  directories.push(directory);
  return directory;
}

/** Runs the CLI on SQLite (whatever the test project) with no configuration file, from `cwd`. */
function run(cwd: string, args: string[], options: RunCliOptions = {}): Promise<CliResult> {
  return runCli(args, { cwd, ...options, env: { SWITCHBOARD_CONFIG: '', SWITCHBOARD_DATABASE_URL: '' } });
}

function expectOneLineRefusal(result: CliResult, message: string): void {
  expect(result.code, result.stderr).toBe(1);
  expect(result.stderr).toContain(message);
  expect(result.stderr.trim().split('\n'), result.stderr).toHaveLength(1);
  expect(result.stderr).toMatch(/^switchboard: /);
  expect(result.stderr).not.toMatch(/^\s+at |node:internal|Node\.js v/m);
}

const asNobody = unprivileged();

describe('a data directory that cannot be used', () => {
  it.skipIf(!existsSync('/proc/self'))(
    'refuses one a pseudo file system will not create (/proc/…) instead of hanging',
    async () => {
      const cwd = scratch();
      for (const command of [
        ['accounts', 'list'],
        ['serve', '--port', '0'],
      ]) {
        expectOneLineRefusal(
          await run(cwd, [...command, '--data-dir', '/proc/switchboard-test']),
          'cannot use /proc/switchboard-test as the data directory: the file system of /proc does not allow creating anything there',
        );
      }
    },
  );

  it('refuses a data directory that is a file, or under one, and leaves the file alone', async () => {
    const cwd = scratch();
    const file = path.join(cwd, 'not-a-directory');
    writeFileSync(file, 'an operator’s file\n');
    for (const command of [
      ['accounts', 'create', 'acme'],
      ['serve', '--port', '0'],
    ]) {
      expectOneLineRefusal(
        await run(cwd, [...command, '--data-dir', file]),
        `cannot use ${file} as the data directory: it is a file, not a directory`,
      );
      expectOneLineRefusal(
        await run(cwd, [...command, '--data-dir', path.join(file, 'data')]),
        `cannot use ${path.join(file, 'data')} as the data directory: ${file} is a file, not a directory`,
      );
    }
    expect(readdirSync(cwd)).toEqual(['not-a-directory']);
  });

  it('creates missing parents of the data directory owner-only, and the database in it', async () => {
    const cwd = scratch();
    const dataDir = path.join(cwd, 'var', 'lib', 'switchboard');
    expect((await run(cwd, ['accounts', 'create', 'acme', '--data-dir', dataDir])).code).toBe(0);
    const created = await run(cwd, ['keys', 'create', '--account', 'acme', '--name', 'web', '--data-dir', dataDir]);
    expect(created.code, created.stderr).toBe(0);
    for (const directory of [path.join(cwd, 'var'), path.join(cwd, 'var', 'lib'), dataDir]) {
      expect(statSync(directory).mode & 0o777, directory).toBe(0o700);
    }
    expect(statSync(path.join(dataDir, 'switchboard.db')).mode & 0o777).toBe(0o600);
    expect(statSync(path.join(dataDir, 'key-secret')).mode & 0o777).toBe(0o600);
  });

  it.skipIf(asNobody.prefix === undefined)(
    `refuses a data directory this user may not write, or create (as nobody${asNobody.prefix ? '' : `; skipped: ${(asNobody as { skipReason: string }).skipReason}`})`,
    async () => {
      const prefix = asNobody.prefix as string[];
      const cwd = scratch();
      const readOnly = path.join(cwd, 'read-only');
      mkdirSync(readOnly, { mode: 0o755 });
      expectOneLineRefusal(
        await run(cwd, ['accounts', 'list', '--data-dir', readOnly], { prefix }),
        `cannot use ${readOnly} as the data directory: it is not writable by this user (uid 65534)`,
      );
      expectOneLineRefusal(
        await run(cwd, ['serve', '--port', '0', '--data-dir', readOnly], { prefix }),
        `cannot create the key secret ${path.join(readOnly, 'key-secret')}: permission denied: this user (uid 65534) may not create entries in ${readOnly}`,
      );
      const under = path.join(readOnly, 'data');
      expectOneLineRefusal(
        await run(cwd, ['accounts', 'list', '--data-dir', under], { prefix }),
        `cannot use ${under} as the data directory: permission denied: this user (uid 65534) may not create entries in ${readOnly}`,
      );
      expect(readdirSync(readOnly)).toEqual([]);

      // The CLI run as root first, the server as its own user later: root's files are 0600.
      const shared = path.join(cwd, 'shared');
      mkdirSync(shared, { mode: 0o777 });
      chmodSync(shared, 0o777);
      expect((await run(cwd, ['keys', 'list', '--account', 'none', '--data-dir', shared])).code).toBe(1);
      expectOneLineRefusal(
        await run(cwd, ['accounts', 'list', '--data-dir', shared], { prefix }),
        `cannot use the SQLite database at ${path.join(shared, 'switchboard.db')}: this user (uid 65534) may not read and write the file`,
      );
    },
  );
});

/** A port held by another listener for the duration of `use`. */
async function withPortTaken<T>(use: (port: number) => Promise<T>): Promise<T> {
  const blocker: Server = createServer();
  await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
  try {
    return await use((blocker.address() as { port: number }).port);
  } finally {
    await new Promise((resolve) => blocker.close(resolve));
  }
}

describe('serve on an address it cannot listen on', () => {
  it('names a port in use, leaves nothing that stops the next start, and starts once the port is free', async () => {
    const cwd = scratch();
    const dataDir = path.join(cwd, 'data');
    const configFile = writeConfigFile(path.join(cwd, 'switchboard.yaml'), {
      server: { host: '127.0.0.1', data_dir: dataDir },
    });
    const port = await withPortTaken(async (taken) => {
      for (const workers of ['1', '2']) {
        const result = await run(cwd, ['serve', '--config', configFile, '--port', String(taken), '--workers', workers]);
        expectOneLineRefusal(
          result,
          `the gateway cannot listen on 127.0.0.1:${taken}: the port is already in use by another process`,
        );
      }
      return taken;
    });
    const served = await startServeProcess(configFile, { SWITCHBOARD_DATABASE_URL: '' }, ['--port', String(port)]);
    expect(served.url).toBe(`http://127.0.0.1:${port}`);
    expect((await fetch(`${served.url}/readyz`)).status).toBe(200);
    expect(await served.stop()).toBe(0);
  });

  it('names an address that is not this machine’s, and a host name that does not resolve', async () => {
    const cwd = scratch();
    for (const workers of ['1', '3']) {
      // 203.0.113.0/24 is TEST-NET-3 (RFC 5737): never a local address.
      expectOneLineRefusal(
        await run(cwd, ['serve', '--host', '203.0.113.7', '--port', '0', '--workers', workers, '--data-dir', 'data']),
        'the gateway cannot listen on 203.0.113.7:0: 203.0.113.7 is not an address of this machine',
      );
    }
    // .invalid never resolves (RFC 2606).
    expectOneLineRefusal(
      await run(cwd, ['serve', '--host', 'no-such-host.invalid', '--port', '0', '--data-dir', 'data']),
      'the gateway cannot listen on no-such-host.invalid:0: the host name no-such-host.invalid does not resolve',
    );
  });

  it.skipIf(asNobody.prefix === undefined)(
    `names a privileged port for a user who may not bind it (as nobody${asNobody.prefix ? '' : `; skipped: ${(asNobody as { skipReason: string }).skipReason}`})`,
    async () => {
      const cwd = scratch();
      const dataDir = path.join(cwd, 'data');
      mkdirSync(dataDir, { mode: 0o777 });
      chmodSync(dataDir, 0o777);
      expectOneLineRefusal(
        await run(cwd, ['serve', '--port', '80', '--data-dir', dataDir], { prefix: asNobody.prefix }),
        'the gateway cannot listen on 127.0.0.1:80: ports below 1024 need root or the CAP_NET_BIND_SERVICE capability',
      );
    },
  );

  it('stops every worker when they cannot listen, leaving none behind', async () => {
    const cwd = scratch();
    const configFile = writeConfigFile(path.join(cwd, 'switchboard.yaml'), {
      server: { host: '127.0.0.1', data_dir: path.join(cwd, 'data') },
    });
    await withPortTaken(async (taken) => {
      const started = startServeProcess(configFile, { SWITCHBOARD_DATABASE_URL: '', SWITCHBOARD_CONFIG: '' }, [
        '--port',
        String(taken),
        '--workers',
        '3',
      ]);
      const failure = await started.then(
        () => undefined,
        (error: Error) => error.message,
      );
      expect(failure).toMatch(/serve exited early with 1/);
      expect(failure).toContain('the port is already in use');
      expect(failure).not.toContain('workers keep crashing');
      expect(failure).not.toMatch(/EPIPE|node:internal/);
    });
    // Workers run with the primary's command line; pgrep exits 1 when no process has it any more.
    const left = (() => {
      try {
        return execFileSync('pgrep', ['-f', configFile], { encoding: 'utf8' });
      } catch (error) {
        if ((error as { status?: number }).status === 1) return '';
        throw error;
      }
    })();
    expect(left).toBe('');
  });
});

describe('a configuration file that cannot be used', () => {
  it('refuses an endless, huge, binary or directory "file" by name instead of reading until memory runs out', async () => {
    const cwd = scratch();
    const huge = path.join(cwd, 'huge.yaml');
    writeFileSync(huge, `# ${'x'.repeat(1022)}\n`.repeat(5 * 1024));
    const binary = path.join(cwd, 'binary.yaml');
    writeFileSync(binary, Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0, 0, 0, 1]));
    const directory = path.join(cwd, 'conf.d');
    mkdirSync(directory);
    const cases: Array<[string, string]> = [
      [huge, 'the file is larger than 4 MiB: is it a configuration file?'],
      [binary, 'the file is binary (it holds NUL bytes), not YAML text'],
      [directory, 'cannot read the file: it is a directory, not a file (EISDIR)'],
      [path.join(cwd, 'missing.yaml'), 'cannot read the file: there is no such file (ENOENT)'],
    ];
    if (existsSync('/dev/zero'))
      cases.push(['/dev/zero', 'the file is larger than 4 MiB: is it a configuration file?']);
    for (const [file, problem] of cases) {
      for (const command of [
        ['config', 'check'],
        ['accounts', 'list'],
        ['serve', '--port', '0'],
      ]) {
        const result = await run(cwd, [...command, '--config', file]);
        expect(result.code, `${command[0]} --config ${file}: ${result.stderr}`).toBe(1);
        expect(result.stderr).toBe(`switchboard: invalid configuration (${file}):\n  - ${problem}\n`);
      }
    }
  });

  it('refuses a named pipe that nothing writes to instead of waiting for a writer forever', async () => {
    const cwd = scratch();
    const fifo = path.join(cwd, 'switchboard.yaml');
    execFileSync('mkfifo', [fifo]);
    const commands = [
      ['config', 'check'],
      ['accounts', 'list'],
      ['serve', '--port', '0'],
    ];
    // At once: each waits the writer's grace period out, and none of them writes to the pipe.
    const results = await Promise.all(commands.map((command) => run(cwd, [...command, '--config', fifo])));
    for (const [index, result] of results.entries()) {
      expect(result.code, `${commands[index]?.[0]} --config ${fifo}: ${result.stderr}`).toBe(1);
      expect(result.stderr).toBe(
        `switchboard: invalid configuration (${fifo}):\n  - it is a pipe and nothing wrote to it (a named pipe needs a writer)\n`,
      );
    }
  });

  it('reads a configuration from a pipe that has a writer: a named one, or standard input', async () => {
    const cwd = scratch();
    const fifo = path.join(cwd, 'switchboard.yaml');
    execFileSync('mkfifo', [fifo]);
    // The writer blocks until the reader opens the pipe, or connects while the reader waits for one.
    const writer = spawn('sh', ['-c', `printf 'server:\\n  port: 9001\\n' > '${fifo}'`]);
    const named = await run(cwd, ['config', 'check', '--config', fifo, '--json']);
    await new Promise((resolve) => (writer.exitCode !== null ? resolve(null) : writer.once('exit', resolve)));
    expect(named.code, named.stderr).toBe(0);
    expect(named.stdout).toContain('9001');
    // Through a shell's pipe: Node gives a child's standard input a socket, which /dev/stdin cannot reopen.
    const piped = execFileSync(
      'sh',
      [
        '-c',
        `printf 'server:\\n  port: 9002\\n' | '${process.execPath}' '${switchboardBin}' config check --json --config /dev/stdin`,
      ],
      { cwd, env: { ...process.env, SWITCHBOARD_CONFIG: '', SWITCHBOARD_DATABASE_URL: '' }, encoding: 'utf8' },
    );
    expect(piped).toContain('9002');
  });

  it.skipIf(asNobody.prefix === undefined)(
    `names a file this user may not read (as nobody${asNobody.prefix ? '' : `; skipped: ${(asNobody as { skipReason: string }).skipReason}`})`,
    async () => {
      const cwd = scratch();
      const file = path.join(cwd, 'switchboard.yaml');
      writeFileSync(file, 'server:\n  port: 9000\n', { mode: 0o600 });
      const result = await run(cwd, ['config', 'check', '--config', file], { prefix: asNobody.prefix });
      expect(result.code).toBe(1);
      expect(result.stderr).toBe(
        `switchboard: invalid configuration (${file}):\n  - cannot read the file: this user (uid 65534) may not read it (EACCES)\n`,
      );
    },
  );

  it('quotes the ${NAME} of a value from the environment in an error, never the value (a secret in the wrong field)', async () => {
    const cwd = scratch();
    const file = writeConfigFile(path.join(cwd, 'switchboard.yaml'), {
      server: { shutdown_timeout: '${PROVIDER_TOKEN}', max_connections: '${PROVIDER_TOKEN}' },
    });
    const secret = 'sk-live-0123456789abcdef';
    const result = await runCli(['config', 'check', '--config', file], {
      cwd,
      env: { PROVIDER_TOKEN: secret, SWITCHBOARD_DATABASE_URL: '' },
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('server.shutdown_timeout: "${PROVIDER_TOKEN}" is not a duration');
    expect(result.stderr).toContain('server.max_connections:');
    expect(result.stderr + result.stdout).not.toContain('sk-live');
    const literal = writeConfigFile(path.join(cwd, 'literal.yaml'), { server: { shutdown_timeout: 'soon' } });
    expect((await run(cwd, ['config', 'check', '--config', literal])).stderr).toContain(
      'server.shutdown_timeout: "soon" is not a duration',
    );
  });

  it('refuses an interval or timeout past what a Node timer holds (it would fire every millisecond), not a retention', async () => {
    const cwd = scratch();
    const file = writeConfigFile(path.join(cwd, 'switchboard.yaml'), {
      server: { shutdown_timeout: '25d' },
      keys: { change_poll_interval: '40d' },
      request_log: { retention: '400d', retention_interval: '30d', flush_interval: '24d' },
    });
    const result = await run(cwd, ['config', 'check', '--config', file]);
    expect(result.code).toBe(1);
    const timerLimit = "must be at most 24d (2147483647 ms): longer timers do not fit Node's timers";
    expect(result.stderr).toBe(
      [
        `switchboard: invalid configuration (${file}):`,
        `  - server.shutdown_timeout: ${timerLimit}`,
        `  - keys.change_poll_interval: ${timerLimit}`,
        `  - request_log.retention_interval: ${timerLimit}`,
        '',
      ].join('\n'),
    );
  });

  it('refuses a provider base_url with credentials or a query, which would not be sent, without printing them', async () => {
    const cwd = scratch();
    for (const baseUrl of [
      'https://user:${UPSTREAM_PASSWORD}@llm.example.com/v1',
      'https://llm.example.com/v1?api-key=${UPSTREAM_PASSWORD}',
      'https://llm.example.com/v1#${UPSTREAM_PASSWORD}',
    ]) {
      const file = writeConfigFile(path.join(cwd, 'switchboard.yaml'), {
        providers: [{ name: 'upstream', type: 'openai', base_url: baseUrl }],
      });
      const result = await runCli(['config', 'check', '--config', file, '--json'], {
        cwd,
        env: { UPSTREAM_PASSWORD: 'hunter2-upstream', SWITCHBOARD_DATABASE_URL: '' },
      });
      expect(result.code, baseUrl).toBe(1);
      expect(result.stderr).toContain(
        'providers[0].base_url: must not hold credentials (user:password@), a query (?…) or a fragment (#…)',
      );
      expect(result.stderr + result.stdout).not.toContain('hunter2');
    }
  });
});

describe('the first run, interrupted', () => {
  /** `serve` on a fresh data directory with no configuration (output not a terminal, so the key goes to a file). */
  function spawnServe(cwd: string, dataDir: string): { child: ChildProcess; stdout: () => string } {
    const child = spawn(process.execPath, [switchboardBin, 'serve', '--port', '0', '--data-dir', dataDir], {
      cwd,
      env: { ...process.env, SWITCHBOARD_CONFIG: '', SWITCHBOARD_DATABASE_URL: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    return { child, stdout: () => stdout };
  }

  const exitOf = (child: ChildProcess) =>
    new Promise<number | null>((resolve) =>
      child.exitCode !== null ? resolve(child.exitCode) : child.once('exit', (code) => resolve(code)),
    );

  async function accountsIn(cwd: string, dataDir: string): Promise<string[]> {
    const listed = await run(cwd, ['accounts', 'list', '--json', '--data-dir', dataDir]);
    expect(listed.code, listed.stderr).toBe(0);
    return (JSON.parse(listed.stdout) as Array<{ name: string }>).map((account) => account.name);
  }

  it('creates nothing when the first key cannot be written, says why, and the next start creates it', async () => {
    const cwd = scratch();
    const dataDir = path.join(cwd, 'data');
    // A directory where the key's file goes: writing it fails like a full disk or a read-only mount would.
    mkdirSync(path.join(dataDir, 'first-api-key'), { recursive: true });
    const failed = spawnServe(cwd, dataDir);
    expect(await exitOf(failed.child)).toBe(1);
    expect(failed.stdout()).toContain(
      `switchboard: cannot write the first API key to ${path.join(dataDir, 'first-api-key')}: it is a directory; nothing was created`,
    );
    expect(await accountsIn(cwd, dataDir)).toEqual([]);

    rmSync(path.join(dataDir, 'first-api-key'), { recursive: true });
    const served = spawnServe(cwd, dataDir);
    const keyFile = path.join(dataDir, 'first-api-key');
    await waitFor('the first key in its file', () => existsSync(keyFile) && readFileSync(keyFile, 'utf8').trim());
    served.child.kill('SIGTERM');
    expect(await exitOf(served.child)).toBe(0);
    const key = readFileSync(keyFile, 'utf8').trim();
    const keys = await run(cwd, ['keys', 'list', '--account', 'default', '--json', '--data-dir', dataDir]);
    expect(JSON.parse(keys.stdout)).toEqual([
      expect.objectContaining({ display: expect.stringMatching(new RegExp(`${key.slice(-4)}$`)) }),
    ]);
  });

  it('a SIGTERM as the server starts never leaves an account whose first key nobody has', async () => {
    const cwd = scratch();
    const dataDir = path.join(cwd, 'data');
    const served = spawnServe(cwd, dataDir);
    // The signal lands while the first run is under way: it is announced after "listening" is logged.
    await waitFor('the server to listen', () => served.stdout().includes('switchboard is listening'), {
      intervalMs: 1,
    });
    served.child.kill('SIGTERM');
    expect(await exitOf(served.child)).toBe(0);
    const keyFile = path.join(dataDir, 'first-api-key');
    if ((await accountsIn(cwd, dataDir)).length === 0) {
      expect(existsSync(keyFile)).toBe(false);
      return;
    }
    const key = readFileSync(keyFile, 'utf8').trim();
    const keys = await run(cwd, ['keys', 'list', '--account', 'default', '--json', '--data-dir', dataDir]);
    expect(JSON.parse(keys.stdout)).toEqual([
      expect.objectContaining({ display: expect.stringMatching(new RegExp(`${key.slice(-4)}$`)) }),
    ]);
  });
});

describe('two processes on one data directory', () => {
  it('two servers started at once on a fresh SQLite database both start, and exactly one makes the first key', async () => {
    for (let round = 0; round < 3; round++) {
      const cwd = scratch();
      const configFile = writeConfigFile(path.join(cwd, 'switchboard.yaml'), {
        server: { host: '127.0.0.1', port: 0, data_dir: path.join(cwd, 'data') },
      });
      const env = { SWITCHBOARD_DATABASE_URL: '', SWITCHBOARD_CONFIG: '' };
      // Both migrate the new file, switch it to WAL and look for accounts at the same moment.
      const servers = await Promise.all([startServeProcess(configFile, env), startServeProcess(configFile, env)]);
      await waitFor('the first run to be announced', () =>
        servers.some((served) => served.output.some((line) => line.includes('"event":"first_run"'))),
      );
      const announced = servers.filter((served) => served.output.some((line) => line.includes('"event":"first_run"')));
      expect(announced).toHaveLength(1);
      for (const served of servers) expect((await fetch(`${served.url}/readyz`)).status).toBe(200);
      const keys = await run(cwd, ['keys', 'list', '--account', 'default', '--json', '--config', configFile]);
      expect(JSON.parse(keys.stdout)).toHaveLength(1);
      for (const served of servers) expect(await served.stop()).toBe(0);
    }
  });
});

describe('a full disk', () => {
  it('says the disk is full instead of a bare "disk I/O error", and leaves no short key secret behind', async (context) => {
    const cwd = scratch();
    const disk = path.join(cwd, 'disk');
    mkdirSync(disk);
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', disk], { stdio: 'ignore' });
    } catch {
      context.skip('mounting a 1 MiB tmpfs needs root (CAP_SYS_ADMIN)');
    }
    try {
      const used = path.join(disk, 'used');
      expect((await run(cwd, ['accounts', 'create', 'acme', '--data-dir', used])).code).toBe(0);
      // The rest of the file system filled up, as by a runaway log.
      try {
        execFileSync('dd', ['if=/dev/zero', `of=${path.join(disk, 'filler')}`, 'bs=64k'], { stdio: 'ignore' });
      } catch {
        // dd stops with "No space left on device": that is the point.
      }
      for (const dataDir of [used, path.join(disk, 'fresh')]) {
        const result = await run(cwd, ['accounts', 'create', 'other', '--data-dir', dataDir]);
        expectOneLineRefusal(result, 'the disk is full (0 bytes free)');
      }
      const fresh = path.join(disk, 'secret-only');
      expectOneLineRefusal(
        await run(cwd, ['serve', '--port', '0', '--data-dir', fresh]),
        `cannot create the key secret ${path.join(fresh, 'key-secret')}: no space left on the device of ${fresh}`,
      );
      expect(readdirSync(fresh)).toEqual([]);
      rmSync(path.join(disk, 'filler'));
      const after = await run(cwd, ['accounts', 'list', '--json', '--data-dir', used]);
      expect(JSON.parse(after.stdout).map((account: { name: string }) => account.name)).toEqual(['acme']);
    } finally {
      execFileSync('umount', [disk]);
    }
  });
});

describe('standard output closed', () => {
  it('serve keeps serving when its log reader goes away (serve | head), saying so once on stderr', async () => {
    const cwd = scratch();
    const child = spawn(
      process.execPath,
      [switchboardBin, 'serve', '--port', '0', '--data-dir', path.join(cwd, 'data'), '--json'],
      { cwd, env: { ...process.env, SWITCHBOARD_CONFIG: '', SWITCHBOARD_DATABASE_URL: '' } },
    );
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    try {
      const url = await new Promise<string>((resolve) => {
        let buffered = '';
        child.stdout.on('data', (chunk: Buffer) => {
          buffered += chunk.toString();
          const match = /"url":"(http:[^"]+)"/.exec(buffered);
          // The reader goes away at once: the first run's log lines and every later one meet a closed pipe.
          if (match) {
            child.stdout.destroy();
            resolve(match[1] as string);
          }
        });
      });
      for (let request = 0; request < 5; request++) {
        expect((await fetch(`${url}/readyz`)).status).toBe(200);
        expect((await fetch(`${url}/v1/models`)).status).toBe(401);
      }
      expect(child.exitCode).toBeNull();
    } finally {
      // Its shutdown log lines meet the closed pipe at the latest.
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
    expect(stderr).toBe('switchboard: standard output is closed (EPIPE); serving on without writing logs to it\n');
  });
});
