import { type ChildProcess, execFile, spawn } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exampleMarkers, firstKeyFileName } from '../src/cli/first-run.js';
import { isWellFormedKey } from '../src/keys/format.js';
import { defaultModel } from '../src/providers/local/default-model.js';
import { projectRoot, switchboardBin } from './support/cli.js';
import { compatPython, hasPrerequisite, localModelPath } from './support/prerequisites.js';
import { writeTinyGguf } from './support/tiny-gguf.js';

/**
 * A fresh installation, as a new user meets it: no configuration file, an empty data directory holding only the
 * built-in model file, and `switchboard serve` in a terminal. The first start creates the account "default" and a
 * key, and prints curl, Python and JavaScript examples; each is run here exactly as printed. When the output is not a
 * terminal (a service's log), the key goes to a file instead. The real SmolLM2 file is used when
 * `npm test` could fetch it, a tiny generated model under the same name otherwise.
 */

const realModel = localModelPath;
const python = compatPython;

let directory: string;
let dataDir: string;
const children: ChildProcess[] = [];

beforeAll(() => {
  directory = mkdtempSync(path.join(tmpdir(), 'switchboard-first-run-'));
  dataDir = path.join(directory, 'data');
  mkdirSync(path.join(dataDir, 'models'), { recursive: true });
  const target = path.join(dataDir, 'models', defaultModel.fileName);
  if (existsSync(realModel)) symlinkSync(realModel, target);
  else writeTinyGguf(target, { endOfTurnLike: 'e' });
});

afterAll(() => {
  for (const child of children) child.kill('SIGKILL');
  rmSync(directory, { recursive: true, force: true });
});

interface Served {
  child: ChildProcess;
  stdout: () => string;
}

const shellQuote = (text: string) => `'${text.replaceAll("'", "'\\''")}'`;

/**
 * Starts `serve` on a data directory, without configuration, and resolves once its output satisfies `ready`. With
 * `terminal`, its output is a terminal (a pseudo-terminal made by util-linux's `script`), as when a person runs it.
 */
function serve(
  data: string,
  extra: string[],
  ready: (stdout: string) => boolean,
  options: { terminal?: boolean } = {},
): Promise<Served> {
  const command = [process.execPath, switchboardBin, 'serve', '--port', '0', '--data-dir', data, ...extra];
  const child = options.terminal
    ? spawn('script', ['-qefc', command.map(shellQuote).join(' '), '/dev/null'], {
        cwd: directory,
        env: { ...process.env, SWITCHBOARD_CONFIG: '' },
        stdio: ['ignore', 'pipe', 'pipe'],
      })
    : spawn(command[0] as string, command.slice(1), {
        cwd: directory,
        env: { ...process.env, SWITCHBOARD_CONFIG: '' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
  children.push(child);
  let stdout = '';
  let stderr = '';
  child.stderr?.on('data', (chunk) => {
    stderr += String(chunk);
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not get ready:\n${stdout}\n${stderr}`)), 60_000);
    child.stdout?.on('data', (chunk) => {
      // A terminal ends lines with CR LF.
      stdout += String(chunk).replaceAll('\r\n', '\n');
      if (ready(stdout)) {
        clearTimeout(timer);
        resolve({ child, stdout: () => stdout });
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`serve exited with ${code}:\n${stdout}\n${stderr}`));
    });
  });
}

/** Human output: ready once the first-run banner has been printed completely. */
const bannerPrinted = (stdout: string) => /First run[\s\S]*={20,}\n/.test(stdout);
/** JSON output: the listening event comes after the first-run event, if there is one. */
const listening = (stdout: string) => stdout.includes('"event":"listening"');

function stop(served: Served): Promise<void> {
  return new Promise((resolve) => {
    served.child.removeAllListeners('exit');
    served.child.on('exit', () => resolve());
    served.child.kill('SIGTERM');
  });
}

/** The text between a marker line and the next "---" line. */
function example(output: string, marker: string): string {
  const start = output.indexOf(`${marker}\n`);
  if (start === -1) throw new Error(`no "${marker}" in:\n${output}`);
  const body = output.slice(start + marker.length + 1);
  return body.slice(0, body.indexOf(`\n${exampleMarkers.end}\n`));
}

function run(command: string, args: string[], cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(command, args, { cwd, timeout: 120_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
    });
  });
}

describe('first run', () => {
  let output = '';
  let first: Served | undefined;

  afterAll(async () => {
    if (first) await stop(first);
  });

  it('creates the default account and a key, and prints them once to a terminal, with the built-in model', async () => {
    // Kept running: the examples name its port.
    first = await serve(dataDir, [], bannerPrinted, { terminal: true });
    output = first.stdout();
    expect(output).toContain('First run: created the account "default" and its first API key');
    expect(output).toMatch(/^ {4}sk-sb-[0-9A-Za-z]+$/m);
    expect(output).toContain(`Model:    ${defaultModel.name}`);
    // The key appears in the banner and its examples, never in a log line.
    const key = (output.match(/^ {4}(sk-sb-[0-9A-Za-z]+)$/m) as RegExpMatchArray)[1] as string;
    const logLines = output.split('\n').filter((line) => line.startsWith('{'));
    expect(logLines.length).toBeGreaterThan(0);
    for (const line of logLines) expect(line).not.toContain(key);
  }, 120_000);

  it('prints a curl command that works exactly as printed', async () => {
    const command = example(output, exampleMarkers.curl);
    const result = await run('bash', ['-c', command], directory);
    expect(result.code).toBe(0);
    const body = JSON.parse(result.stdout);
    expect(body.object).toBe('chat.completion');
    expect(body.model).toBe(defaultModel.name);
    expect(typeof body.choices[0].message.content).toBe('string');
    expect(body.usage.completion_tokens).toBeGreaterThan(0);
  }, 120_000);

  it.runIf(hasPrerequisite('Python SDK environment'))(
    'prints an openai-python snippet that works exactly as printed',
    async () => {
      const result = await run(python, ['-c', example(output, exampleMarkers.python)], directory);
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
    },
    120_000,
  );

  it('prints an openai-node snippet that works exactly as printed', async () => {
    // Inside the project, so `import 'openai'` resolves as it would in the user's project after `npm install openai`.
    const scratch = mkdtempSync(path.join(projectRoot, 'node_modules', '.first-run-'));
    writeFileSync(path.join(scratch, 'hello.mjs'), example(output, exampleMarkers.javascript));
    const result = await run(process.execPath, ['hello.mjs'], scratch);
    rmSync(scratch, { recursive: true, force: true });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
  }, 120_000);

  it('creates nothing and prints no key on later starts', async () => {
    if (first) await stop(first);
    first = undefined;
    const again = await serve(dataDir, ['--json'], listening);
    expect(again.stdout()).not.toContain('first_run');
    expect(again.stdout()).not.toMatch(/sk-sb-/);
    await stop(again);
  }, 120_000);

  it('writes the key to a file only this user can read when the output is not a terminal, and logs where', async () => {
    const piped = path.join(directory, 'piped');
    mkdirSync(path.join(piped, 'models'), { recursive: true });
    const served = await serve(piped, [], (stdout) => stdout.includes('"keyFile"'));
    const output = served.stdout();
    // Output that is not a terminal ends up in journald or docker logs: no key in it, only where to find it.
    expect(output).not.toMatch(/sk-sb-/);
    const logLine = output.split('\n').find((line) => line.includes('"keyFile"')) as string;
    const keyFile = path.join(piped, firstKeyFileName);
    expect(JSON.parse(logLine)).toMatchObject({ keyFile, account: 'default' });
    expect(logLine).toContain(keyFile);
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    const key = readFileSync(keyFile, 'utf8').trim();
    expect(isWellFormedKey(key)).toBe(true);
    const url = (
      JSON.parse(output.split('\n').find((line) => line.includes('switchboard is listening')) as string) as {
        url: string;
      }
    ).url;
    const models = await fetch(`${url}/v1/models`, { headers: { authorization: `Bearer ${key}` } });
    expect(models.status).toBe(200);
    await stop(served);
  }, 120_000);

  it('announces the first run as JSON with --json, naming the key file instead of the key', async () => {
    const fresh = path.join(directory, 'fresh');
    mkdirSync(path.join(fresh, 'models'), { recursive: true });
    const served = await serve(fresh, ['--json'], listening);
    const event = served
      .stdout()
      .split('\n')
      .filter((line) => line.includes('"event":"first_run"'))
      .map((line) => JSON.parse(line))[0];
    await stop(served);
    // No model file in this data directory: the account and key exist, and there is no model to name yet.
    expect(event).toMatchObject({ event: 'first_run', account: 'default', model: null });
    expect(event.key).toBeUndefined();
    expect(event.keyFile).toBe(path.join(fresh, firstKeyFileName));
    expect(served.stdout()).not.toMatch(/sk-sb-/);
    expect(readFileSync(event.keyFile, 'utf8')).toMatch(/^sk-sb-[0-9A-Za-z]+\n$/);
    expect(event.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    expect(served.stdout()).toContain('npx switchboard models fetch');
  }, 120_000);
});
