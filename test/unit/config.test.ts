import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, parseConfig } from '../../src/config/loader.js';
import { parseDuration, parseSize } from '../../src/config/units.js';

function problemsOf(raw: unknown, env: NodeJS.ProcessEnv = {}): string[] {
  try {
    parseConfig(raw, 'test', { env });
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
}

const provider = {
  name: 'openai',
  type: 'openai',
  base_url: 'https://api.openai.com/v1',
  api_key: '${OPENAI_API_KEY}',
};
const model = { name: 'gpt-4o-mini', provider: 'openai', upstream_model: 'gpt-4o-mini' };

describe('configuration', () => {
  it('has embedded defaults: 127.0.0.1:8080, ./data, a 16 MB body limit', () => {
    const config = parseConfig({}, 'test', { cwd: '/srv/app' });
    expect(config.server).toMatchObject({ host: '127.0.0.1', port: 8080, dataDir: '/srv/app/data' });
    expect(config.limits.maxBodyBytes).toBe(16 * 1024 * 1024);
    expect(config.providers).toEqual([]);
  });

  it('accepts the documented minimal shape and interpolates ${ENV} secrets', () => {
    const config = parseConfig({ providers: [provider], models: [model] }, 'test', {
      env: { OPENAI_API_KEY: 'sk-live' },
    });
    expect(config.providers[0]).toMatchObject({
      name: 'openai',
      baseUrl: 'https://api.openai.com/v1',
      apiKey: 'sk-live',
    });
    expect(config.models[0]).toMatchObject({ name: 'gpt-4o-mini', upstreamModel: 'gpt-4o-mini', ownedBy: 'openai' });
  });

  it('supports ${VAR:-default} and $${literal}', () => {
    const config = parseConfig(
      { providers: [{ ...provider, api_key: '${MISSING:-fallback}', headers: { 'x-note': '$${NOT_A_VAR}' } }] },
      'test',
      { env: {} },
    );
    const parsed = config.providers[0];
    if (parsed?.type !== 'openai') throw new Error('expected an openai provider');
    expect(parsed.apiKey).toBe('fallback');
    expect(parsed.headers['x-note']).toBe('${NOT_A_VAR}');
  });

  it('names the field and the problem', () => {
    expect(problemsOf({ providers: [provider] }, {})).toEqual([
      'providers[0].api_key: environment variable OPENAI_API_KEY is not set',
    ]);
    expect(problemsOf({ server: { port: 'eighty' } })[0]).toMatch(/^server\.port: /);
    expect(problemsOf({ server: { prot: 1 } })).toEqual(['server: unknown field "prot"']);
    expect(problemsOf({ providers: [{ ...provider, base_url: 'ftp://x' }] }, { OPENAI_API_KEY: 'k' })[0]).toMatch(
      /^providers\[0\]\.base_url: /,
    );
    expect(problemsOf({ providers: [{ ...provider, type: 'nope' }] }, { OPENAI_API_KEY: 'k' })[0]).toMatch(
      /^providers\[0\]\.type: /,
    );
    expect(problemsOf({ models: [model] })).toEqual([
      'models[0].provider: unknown provider "openai" (defined providers: none)',
    ]);
    expect(problemsOf({ limits: { max_body_size: 'huge' } })[0]).toContain(
      'limits.max_body_size: "huge" is not a size',
    );
    expect(
      problemsOf({ providers: [{ ...provider, timeouts: { connect: 'soon' } }] }, { OPENAI_API_KEY: 'k' })[0],
    ).toContain('providers[0].timeouts.connect: "soon" is not a duration');
    expect(problemsOf({ models: [{ provider: 'x' }] })).toContain('models[0].name: is required');
  });

  it('names an unset variable and every other bad field at once, as configuration.md shows', () => {
    const ollama = { name: 'ollama', type: 'openai', base_url: 'http://127.0.0.1:11434/v1', api_key: '${OLLAMA_KEY}' };
    const models = [model, { name: 'llama', provider: 'ollama' }, { name: 'typo', provider: 'opnai' }];
    expect(problemsOf({ providers: [provider, ollama], models })).toEqual([
      'providers[0].api_key: environment variable OPENAI_API_KEY is not set',
      'providers[1].api_key: environment variable OLLAMA_KEY is not set',
      'models[2].provider: unknown provider "opnai" (defined providers: openai, ollama)',
    ]);
  });

  it('tells a field of the wrong type from a missing one, without printing its value', () => {
    const secret = 'sk-live-do-not-print';
    const problems = problemsOf({ providers: [{ ...provider, api_key: [secret] }], server: { port: 'eighty' } });
    expect(problems).toEqual([
      'server.port: Invalid input: expected number, received string',
      'providers[0].api_key: Invalid input: expected string, received array',
    ]);
    expect(problems.join('\n')).not.toContain(secret);
    expect(problemsOf({ models: [{ provider: 'x' }] })).toContain('models[0].name: is required');
  });

  it('says the file must be a mapping when it holds a list or a lone value', () => {
    expect(problemsOf(['server', 'models'])).toEqual([
      '(top level): the file must be a YAML mapping of settings (server:, providers:, models:, ...), not a list',
    ]);
    expect(problemsOf('hello')).toEqual([
      '(top level): the file must be a YAML mapping of settings (server:, providers:, models:, ...), not a string',
    ]);
  });

  it('refuses duplicate names', () => {
    const problems = problemsOf({ providers: [provider, provider], models: [model, model] }, { OPENAI_API_KEY: 'k' });
    expect(problems).toContain('providers[1].name: duplicate provider name "openai"');
    expect(problems).toContain('models[1].name: duplicate model name "gpt-4o-mini"');
  });

  it('loads YAML files, lets flags override them, and reports YAML syntax errors', () => {
    const directory = mkdtempSync(path.join(tmpdir(), 'switchboard-config-'));
    const file = path.join(directory, 'switchboard.yaml');
    writeFileSync(file, 'server:\n  port: 9000\n  host: 0.0.0.0\n');
    const loaded = loadConfig({ file, overrides: { port: 7000 }, cwd: directory, env: {} });
    expect(loaded.config.server).toMatchObject({ port: 7000, host: '0.0.0.0', dataDir: path.join(directory, 'data') });
    writeFileSync(file, 'server:\n  port: [1,\n');
    expect(() => loadConfig({ file, env: {} })).toThrow(/YAML syntax/);
    expect(() => loadConfig({ file: path.join(directory, 'missing.yaml'), env: {} })).toThrow(
      /cannot read the file: there is no such file \(ENOENT\)/,
    );
    const laughs = ['a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]'];
    for (const [index, name] of [...'bcdefghi'].entries()) {
      laughs.push(`${name}: &${name} [${Array(9).fill(`*${'abcdefghi'[index]}`).join(', ')}]`);
    }
    writeFileSync(file, `${laughs.join('\n')}\n`);
    expect(() => loadConfig({ file, env: {} })).toThrow(/invalid configuration[\s\S]*YAML: Excessive alias count/);
    writeFileSync(file, 'server: &loop\n  nested: *loop\n');
    expect(() => loadConfig({ file, env: {} })).toThrow(
      'server.nested: a YAML alias (*name) that refers to its own anchor',
    );
  });

  it('picks ./switchboard.yaml up when no file is named', () => {
    const directory = mkdtempSync(path.join(tmpdir(), 'switchboard-config-'));
    expect(loadConfig({ cwd: directory, env: {} }).file).toBeUndefined();
    writeFileSync(path.join(directory, 'switchboard.yaml'), 'server:\n  port: 9100\n');
    const loaded = loadConfig({ cwd: directory, env: {} });
    expect(loaded.file).toBe(path.join(directory, 'switchboard.yaml'));
    expect(loaded.config.server.port).toBe(9100);
  });

  it('parses durations and sizes', () => {
    expect(parseDuration('30s')).toBe(30_000);
    expect(parseDuration('1h30m')).toBe(5_400_000);
    expect(parseDuration('30d')).toBe(2_592_000_000);
    expect(parseDuration('250')).toBe(250);
    expect(parseDuration('5 minutes')).toBeUndefined();
    expect(parseSize('16mb')).toBe(16 * 1024 * 1024);
    expect(parseSize('512kb')).toBe(512 * 1024);
    expect(parseSize('lots')).toBeUndefined();
  });
});

describe('providers and routing configuration', () => {
  const anthropic = { name: 'claude', type: 'anthropic', api_key: 'k' };
  const gemini = { name: 'google', type: 'gemini', api_key: 'k' };

  it('gives each provider type its own fields and defaults', () => {
    const config = parseConfig({ providers: [anthropic, gemini, { ...provider, api_key: 'k' }] }, 'test', { env: {} });
    expect(config.providers[0]).toMatchObject({
      type: 'anthropic',
      baseUrl: 'https://api.anthropic.com/v1',
      version: '2023-06-01',
      beta: [],
    });
    expect(config.providers[1]).toMatchObject({
      type: 'gemini',
      baseUrl: 'https://generativelanguage.googleapis.com/v1beta',
    });
    expect(problemsOf({ providers: [{ ...gemini, version: 'x' }] })).toEqual(['providers[0]: unknown field "version"']);
    expect(problemsOf({ providers: [{ name: 'x', type: 'bedrock' }] })[0]).toMatch(
      /^providers\[0\]\.type: .*'openai' \| 'anthropic' \| 'gemini'/,
    );
    expect(problemsOf({ providers: [{ name: 'x', type: 'openai' }] })).toEqual(['providers[0].base_url: is required']);
  });

  it('configures /v1/responses: stored state, and native or translated per provider and model', () => {
    const config = parseConfig(
      {
        providers: [
          { ...provider, api_key: 'k' },
          { ...provider, name: 'native', api_key: 'k', responses_api: 'native' },
        ],
        models: [model, { name: 'm2', provider: 'openai', responses_api: 'native' }],
        responses: { retention: '7d', max_stored_bytes: '2mb', stream_lease: '2m' },
      },
      'test',
      { env: {} },
    );
    expect(config.responses).toEqual({
      retentionMs: 7 * 86_400_000,
      maxStoredBytes: 2 * 1024 * 1024,
      maxConversationBytes: 64 * 1024 * 1024,
      retentionBatchSize: 500,
      streamLeaseMs: 120_000,
    });
    expect(config.providers.map((entry) => (entry.type === 'openai' ? entry.responsesApi : undefined))).toEqual([
      'translate',
      'native',
    ]);
    expect(config.models.map((entry) => entry.responsesApi)).toEqual([undefined, 'native']);
    expect(parseConfig({}, 'test').responses).toEqual({
      retentionMs: 30 * 86_400_000,
      maxStoredBytes: 16 * 1024 * 1024,
      maxConversationBytes: 64 * 1024 * 1024,
      retentionBatchSize: 500,
      streamLeaseMs: 60_000,
    });
    expect(problemsOf({ responses: { stream_lease: '500ms' } })).toEqual([
      'responses.stream_lease: must be at least 1s',
    ]);
    expect(problemsOf({ providers: [{ ...provider, api_key: 'k', responses_api: 'both' }] })[0]).toMatch(
      /^providers\[0\]\.responses_api: /,
    );
    expect(
      problemsOf({
        providers: [{ ...anthropic }],
        models: [{ name: 'claude', provider: anthropic.name, responses_api: 'native' }],
      }),
    ).toEqual([
      `models[0].responses_api: "native" needs OpenAI-compatible providers; "${anthropic.name}" is of type anthropic`,
    ]);
    expect(problemsOf({ providers: [{ ...anthropic, responses_api: 'native' }] })).toEqual([
      'providers[0]: unknown field "responses_api"',
    ]);
  });

  it('expands the short form into one deployment and merges retry settings', () => {
    const config = parseConfig(
      {
        routing: { retry: { attempts: 4 } },
        providers: [anthropic, gemini],
        models: [
          {
            name: 'claude',
            provider: 'claude',
            upstream_model: 'claude-sonnet-4-5',
            pricing: { input: 3, output: 15 },
          },
          {
            name: 'mixed',
            deployments: [
              { provider: 'claude', upstream_model: 'claude-haiku-4-5', weight: 3, timeouts: { first_byte: '20s' } },
              { provider: 'google', upstream_model: 'gemini-2.5-flash', pricing: { input: 0.3, output: 2.5 } },
            ],
            fallbacks: ['claude'],
            retry: { attempts: 0 },
            streaming: false,
            parameters: { unsupported: ['seed'], on_unsupported: 'refuse' },
            pricing: { input: 1, output: 5 },
          },
        ],
      },
      'test',
      { env: {} },
    );
    const [claude, mixed] = config.models;
    expect(claude?.deployments).toEqual([
      {
        id: 'claude/claude-sonnet-4-5',
        provider: 'claude',
        upstreamModel: 'claude-sonnet-4-5',
        weight: 1,
        timeouts: undefined,
        pricing: claude?.pricing,
      },
    ]);
    expect(claude?.retry).toMatchObject({ attempts: 4, initialBackoffMs: 250, maxRetryAfterMs: 5000 });
    expect(mixed).toMatchObject({
      provider: 'claude',
      upstreamModel: 'claude-haiku-4-5',
      streaming: false,
      fallbacks: ['claude'],
    });
    expect(mixed?.retry.attempts).toBe(0);
    expect(mixed?.parameters).toEqual({ unsupported: ['seed'], onUnsupported: 'refuse' });
    expect(mixed?.deployments[0]?.timeouts).toEqual({ connectMs: undefined, firstByteMs: 20_000, idleMs: undefined });
    expect(mixed?.deployments[0]?.pricing?.inputPerMillion).toBe(1);
    expect(mixed?.deployments[1]?.pricing?.inputPerMillion).toBe(0.3);
    expect(config.routing.circuitBreaker).toEqual({
      enabled: true,
      failureThreshold: 5,
      failurePercentage: 80,
      minimumRequests: 10,
      minimumAccounts: 2,
      windowMs: 60_000,
      cooldownMs: 30_000,
      maxCooldownMs: 300_000,
      panicThreshold: 50,
      syncIntervalMs: 1000,
    });
  });

  it('reads the circuit breaker, old keys included, and names a bad one', () => {
    const config = parseConfig(
      {
        routing: {
          circuit_breaker: { failure_threshold: 2, cooldown: '10s', max_cooldown: '1m', minimum_accounts: 1 },
        },
      },
      'test',
    );
    expect(config.routing.circuitBreaker).toMatchObject({
      failureThreshold: 2,
      cooldownMs: 10_000,
      maxCooldownMs: 60_000,
      minimumAccounts: 1,
      minimumRequests: 10,
    });
    expect(problemsOf({ routing: { circuit_breaker: { cooldown: '10m' } } })).toEqual([
      'routing.circuit_breaker.max_cooldown: must not be shorter than cooldown',
    ]);
    expect(problemsOf({ routing: { circuit_breaker: { failure_percentage: 150 } } })[0]).toMatch(
      /^routing\.circuit_breaker\.failure_percentage: /,
    );
    expect(problemsOf({ routing: { circuit_breaker: { consecutive_failures: 3 } } })[0]).toMatch(
      /^routing\.circuit_breaker: .*consecutive_failures/,
    );
  });

  it('names the bad field in deployments and fallbacks', () => {
    const problems = problemsOf({
      providers: [anthropic],
      models: [
        { name: 'a', deployments: [{ provider: 'claude' }, { provider: 'nope' }], fallbacks: ['a', 'ghost'] },
        { name: 'b', provider: 'claude', deployments: [{ provider: 'claude' }] },
        { name: 'c' },
        {
          name: 'd',
          deployments: [
            { provider: 'claude', upstream_model: 'x' },
            { provider: 'claude', upstream_model: 'x' },
          ],
        },
      ],
    });
    expect(problems).toEqual(
      expect.arrayContaining([
        'models[0].deployments[1].provider: unknown provider "nope" (defined providers: claude)',
        'models[0].fallbacks[0]: a model cannot be its own fallback',
        'models[0].fallbacks[1]: unknown model "ghost"',
        'models[1].deployments: use either provider/upstream_model (one deployment) or deployments, not both',
        'models[2].provider: is required (or list deployments)',
        'models[3].deployments[1]: duplicate deployment "claude/x" (the same provider and upstream model twice)',
      ]),
    );
  });
});

describe('switchboard.example.yaml', () => {
  it('is a valid configuration (the documentation and the schema agree)', () => {
    const file = path.resolve(import.meta.dirname, '../../switchboard.example.yaml');
    const { config } = loadConfig({
      file,
      env: { OPENAI_API_KEY: 'sk-test', ANTHROPIC_API_KEY: 'sk-ant-test', GEMINI_API_KEY: 'gemini-test' },
    });
    expect(config.providers.map((provider) => `${provider.name}:${provider.type}`)).toEqual([
      'openai:openai',
      'ollama:openai',
      'anthropic:anthropic',
      'anthropic-backup:anthropic',
      'gemini:gemini',
      'local:local',
    ]);
    expect(config.models.find((model) => model.name === 'claude-sonnet')?.deployments.map((item) => item.id)).toEqual([
      'anthropic/claude-sonnet-4-5',
      'anthropic-backup/claude-sonnet-4-5',
      'gemini/gemini-2.5-pro',
    ]);
    expect(config.models[0]?.pricing?.cachedInputPerMillion).toBe(0.075);
    expect(config.keys.secret).toBeUndefined();
    expect(config.database.url).toBeUndefined();
    expect(config.redis).toMatchObject({ url: undefined, onUnavailable: { rateLimits: 'local', budgets: 'deny' } });
    expect(config.requestLog.retentionMs).toBe(30 * 86_400_000);
  });
});
