import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, parseConfig } from '../../src/config/loader.js';
import { defaultModel } from '../../src/providers/local/default-model.js';

const directories: string[] = [];
const temporary = () => {
  const directory = mkdtempSync(path.join(tmpdir(), 'switchboard-local-config-'));
  directories.push(directory);
  return directory;
};
afterAll(() => {
  for (const directory of directories) rmSync(directory, { recursive: true, force: true });
});

describe('local provider configuration', () => {
  it('reads every local field with its defaults, and resolves model_path against the data directory', () => {
    const config = parseConfig(
      {
        server: { data_dir: '/srv/switchboard' },
        providers: [{ name: 'local', type: 'local', model_path: 'models/m.gguf' }],
        models: [{ name: 'm', provider: 'local' }],
      },
      'test',
      { env: {} },
    );
    expect(config.providers[0]).toEqual({
      name: 'local',
      type: 'local',
      modelPath: '/srv/switchboard/models/m.gguf',
      contextSize: undefined,
      threads: undefined,
      maxConcurrent: 4,
      queueSize: 64,
      queuePerAccount: 16,
      queueTimeoutMs: 60_000,
      batchSize: undefined,
      gpu: 'auto',
      chatTemplate: undefined,
      defaultMaxTokens: undefined,
      timeouts: { firstTokenMs: 300_000, idleMs: 120_000 },
    });
  });

  it('names the bad field of a local provider, and unknown provider types', () => {
    const problems = (raw: unknown) => {
      try {
        parseConfig(raw, 'test', { env: {} });
      } catch (error) {
        if (error instanceof ConfigError) return error.problems;
      }
      return [];
    };
    expect(problems({ providers: [{ name: 'l', type: 'local' }] })).toEqual(['providers[0].model_path: is required']);
    expect(problems({ providers: [{ name: 'l', type: 'local', model_path: 'x', base_url: 'http://a' }] })).toEqual([
      'providers[0]: unknown field "base_url"',
    ]);
    expect(problems({ providers: [{ name: 'l', type: 'local', model_path: 'x', max_concurrent: 0 }] })[0]).toMatch(
      /^providers\[0\]\.max_concurrent: /,
    );
    expect(
      problems({ providers: [{ name: 'l', type: 'local', model_path: 'x', timeouts: { first_byte: '1s' } }] }),
    ).toEqual(['providers[0].timeouts: unknown field "first_byte"']);
    expect(
      problems({ providers: [{ name: 'l', type: 'local', model_path: 'x', queue_size: 8, queue_per_account: 9 }] }),
    ).toEqual(['providers[0].queue_per_account: must not exceed queue_size (8)']);
    expect(problems({ providers: [{ name: 'l', type: 'llama' }] })[0]).toMatch(
      /^providers\[0\]\.type: .*'openai'.*'local'/,
    );
  });

  it('serves the built-in model by default once its file is in the data directory', () => {
    const directory = temporary();
    expect(loadConfig({ cwd: directory, env: {} }).config.models).toEqual([]);
    mkdirSync(path.join(directory, 'data', 'models'), { recursive: true });
    writeFileSync(path.join(directory, 'data', 'models', defaultModel.fileName), '');
    const { config, file } = loadConfig({ cwd: directory, env: {} });
    expect(file).toBeUndefined();
    expect(config.providers).toMatchObject([
      { name: 'local', type: 'local', modelPath: path.join(directory, 'data', 'models', defaultModel.fileName) },
    ]);
    // An answer that rambles on is cut at 512 tokens, not at the end of the context minutes later.
    expect(config.providers[0]).toMatchObject({ defaultMaxTokens: 512 });
    expect(config.models).toMatchObject([{ name: 'smollm2-135m-instruct', provider: 'local' }]);
    // --data-dir moves where it is looked for.
    expect(loadConfig({ cwd: directory, env: {}, overrides: { dataDir: 'elsewhere' } }).config.models).toEqual([]);
  });

  it('leaves a configuration file in charge: no built-in model is added to it', () => {
    const directory = temporary();
    mkdirSync(path.join(directory, 'data', 'models'), { recursive: true });
    writeFileSync(path.join(directory, 'data', 'models', defaultModel.fileName), '');
    writeFileSync(path.join(directory, 'switchboard.yaml'), 'server:\n  port: 9100\n');
    expect(loadConfig({ cwd: directory, env: {} }).config.models).toEqual([]);
  });
});
