import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { defaultModel } from '../src/providers/local/default-model.js';
import { projectRoot } from './support/cli.js';

// `npm start -- --data-dir DIR` must fetch the built-in model into DIR, where that server looks for it, not ./data.
const builtInModel = path.join(projectRoot, 'data', 'models', defaultModel.fileName);
const scratch = mkdtempSync(path.join(tmpdir(), 'switchboard-start-'));
let child: ChildProcess | undefined;

afterAll(() => {
  child?.kill('SIGKILL');
  rmSync(scratch, { recursive: true, force: true });
});

function withoutConfigVariable(environment: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const { SWITCHBOARD_CONFIG: _unused, ...rest } = environment;
  return rest;
}

describe.runIf(existsSync(builtInModel))('npm start', () => {
  it('looks for the built-in model in the data directory given after --, and serves it from there', async () => {
    const dataDir = path.join(scratch, 'elsewhere');
    mkdirSync(path.join(dataDir, 'models'), { recursive: true });
    // Already in place (sha256 checked), so nothing is downloaded: the fetch only says where it looked.
    symlinkSync(builtInModel, path.join(dataDir, 'models', defaultModel.fileName));
    const started = spawn(
      'bash',
      [path.join(projectRoot, 'scripts', 'start.sh'), '--data-dir', dataDir, '--port', '0', '--json'],
      {
        cwd: scratch,
        env: withoutConfigVariable(process.env),
      },
    );
    child = started;
    let output = '';
    started.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    started.stderr?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    const exited = new Promise<number | null>((resolve) => started.on('exit', resolve));
    const listening = await Promise.race([
      new Promise<string>((resolve) => {
        const check = setInterval(() => {
          const line = output.split('\n').find((candidate) => candidate.includes('switchboard is listening'));
          if (line) {
            clearInterval(check);
            resolve(line);
          }
        }, 50);
      }),
      exited.then((code) => {
        throw new Error(`exited with ${code} before listening:\n${output}`);
      }),
    ]);
    expect(output).toContain(path.join(dataDir, 'models', defaultModel.fileName));
    expect(JSON.parse(listening)).toMatchObject({ database: path.join(dataDir, 'switchboard.db'), models: 1 });
    expect(existsSync(path.join(scratch, 'data'))).toBe(false);
    started.kill('SIGTERM');
    expect(await exited).toBe(0);
  }, 120_000);
});
