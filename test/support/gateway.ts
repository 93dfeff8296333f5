import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { createAccount } from '../../src/accounts/service.js';
import { parseConfig } from '../../src/config/loader.js';
import { loadKeySecret } from '../../src/keys/secret.js';
import { createKey, setKeyLimits } from '../../src/keys/service.js';
import { type Gateway, startGateway } from '../../src/main.js';
import { createLogger } from '../../src/observability/logger.js';
import type { TestHooks } from '../../src/startup/test-hooks.js';
import { createTestDatabase, type TestDatabase } from './database.js';
import type { MockUpstream } from './mock-openai-upstream.js';
import { stuckTestDeadlineMs, waitFor } from './wait.js';

/** The secret the mock provider is configured with; it must reach the upstream and nothing else. */
export const upstreamSecret = 'sk-upstream-secret-never-leak-0123456789';

/** Public model names the tests use; each maps to a mock upstream behaviour of the same name. */
export const scenarioModels = [
  'mock',
  'no-usage',
  'tools',
  'structured',
  'repeat-role',
  'json-for-stream',
  'midstream-reset',
  'midstream-truncate',
  'midstream-error',
  'slow-stream',
  'slow-json',
  'held',
  'hang',
  'reset',
  'garbage',
  'html-502',
  'error-in-200',
  'error-400',
  'error-401',
  'error-404',
  'error-422',
  'error-429',
  'error-500',
  'error-503',
  'error-529',
] as const;

/**
 * Provider `mock` gives up on the upstream after 1 s, so that the timeout tests (`hang`, the mid-stream failures) are
 * quick. Provider `mock-patient` is the same mock with timeouts only a stuck test reaches, for the models whose answer
 * must not become a 504 when the machine is loaded: `held` (answered when the test says so, see held-requests.ts) and
 * `mock-patient` (the `mock` answer), for tests that count the outcomes of many concurrent requests.
 */
const patientScenarios: ReadonlySet<string> = new Set(['held']);
const patientTimeout = '60s';

export interface TestGateway {
  gateway: Gateway;
  url: string;
  baseUrl: string;
  /** A key of account "acme" that may call every model. */
  key: string;
  keyId: string;
  dataDir: string;
  /** Every log line the gateway wrote. */
  logLines: string[];
  secret: Buffer;
  /** Environment for CLI processes so they open this gateway's database (PostgreSQL runs need the URL). */
  cliEnv: Record<string, string>;
  database: TestDatabase;
  newKey(options?: {
    account?: string;
    models?: string[];
    expiresInMs?: number;
    name?: string;
    limits?: Record<string, unknown>;
  }): Promise<{ key: string; id: string }>;
  close(): Promise<void>;
}

export interface TestGatewayOptions {
  mock: MockUpstream;
  /** Extra raw (YAML-shaped) configuration merged over the defaults. */
  config?: Record<string, unknown>;
  /** Extra models besides the scenario models. */
  models?: Array<Record<string, unknown>>;
  /** Extra providers besides `mock` (the OpenAI-compatible mock upstream). */
  providers?: Array<Record<string, unknown>>;
  /** An existing data directory (kept on close). */
  dataDir?: string;
  /** An existing database, e.g. to restart on the data of another test gateway (kept on close). */
  database?: TestDatabase;
  /** Test-only hooks into the gateway: a manual health clock, signals to wait on (src/startup/test-hooks.ts). */
  testHooks?: TestHooks;
}

export async function startTestGateway(options: TestGatewayOptions): Promise<TestGateway> {
  const dataDir = options.dataDir ?? mkdtempSync(path.join(tmpdir(), 'switchboard-test-'));
  const database = options.database ?? (await createTestDatabase());
  const raw = {
    ...(database.url ? { database: { url: database.url } } : {}),
    server: { host: '127.0.0.1', port: 0, data_dir: dataDir, stream_keepalive: '10s', shutdown_timeout: '5s' },
    request_log: { flush_interval: '50ms' },
    // Retries keep their logic but not their waits; nothing is ejected unless a test turns the breaker on.
    routing: { retry: { initial_backoff: '10ms', max_backoff: '40ms' }, circuit_breaker: { enabled: false } },
    providers: [
      {
        name: 'mock',
        type: 'openai',
        base_url: options.mock.baseUrl,
        api_key: upstreamSecret,
        timeouts: { connect: '1s', first_byte: '1s', idle: '1s' },
      },
      {
        name: 'mock-patient',
        type: 'openai',
        base_url: options.mock.baseUrl,
        api_key: upstreamSecret,
        timeouts: { connect: patientTimeout, first_byte: patientTimeout, idle: patientTimeout },
      },
      ...(options.providers ?? []),
    ],
    models: [
      ...scenarioModels.map((name) => ({
        name,
        provider: patientScenarios.has(name) ? 'mock-patient' : 'mock',
        upstream_model: name,
        pricing: { input: 1, output: 2 },
      })),
      { name: 'mock-patient', provider: 'mock-patient', upstream_model: 'mock', pricing: { input: 1, output: 2 } },
      {
        name: 'gpt-4o-mini',
        provider: 'mock',
        upstream_model: 'mock',
        pricing: { input: 0.15, output: 0.6, cached_input: 0.075 },
      },
      ...(options.models ?? []),
    ],
  };
  // Sections given by the test are merged over the defaults, key by key.
  for (const [section, value] of Object.entries(options.config ?? {})) {
    const current = (raw as Record<string, unknown>)[section];
    (raw as Record<string, unknown>)[section] =
      current &&
      typeof current === 'object' &&
      !Array.isArray(current) &&
      value &&
      typeof value === 'object' &&
      !Array.isArray(value)
        ? { ...current, ...value }
        : value;
  }
  const config = parseConfig(raw, 'test');
  const logLines: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, callback) {
      logLines.push(String(chunk));
      callback();
    },
  });
  const gateway = await startGateway(config, { logger: createLogger('info', sink), testHooks: options.testHooks });
  const secret = loadKeySecret(dataDir, config.keys.secret);
  const db = gateway.database.db;
  if (!(await db.selectFrom('accounts').select('id').where('name', '=', 'acme').executeTakeFirst())) {
    await createAccount(db, { name: 'acme' });
  }
  const newKey: TestGateway['newKey'] = async (keyOptions = {}) => {
    const created = await createKey(db, secret, {
      account: keyOptions.account ?? 'acme',
      name: keyOptions.name ?? 'test-app',
      models: keyOptions.models,
      expiresInMs: keyOptions.expiresInMs,
    });
    if (keyOptions.limits) await setKeyLimits(db, created.info.id, keyOptions.limits);
    return { key: created.key, id: created.info.id };
  };
  const first = await newKey();
  return {
    gateway,
    url: gateway.url,
    baseUrl: `${gateway.url}/v1`,
    key: first.key,
    keyId: first.id,
    dataDir,
    logLines,
    secret,
    cliEnv: database.env,
    database,
    newKey,
    close: async () => {
      await gateway.close();
      if (!options.database) await database.drop();
      if (!options.dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Waits until the request log holds `count` rows for the request ids given (the writer flushes asynchronously). */
export function waitForLogRows(gateway: TestGateway, requestIds: string[], timeoutMs = stuckTestDeadlineMs) {
  return waitFor(
    `${requestIds.length} request-log rows`,
    async () => {
      const rows = await gateway.gateway.database.db
        .selectFrom('request_log')
        .selectAll()
        .where('request_id', 'in', requestIds)
        .execute();
      return rows.length >= requestIds.length && rows;
    },
    { timeoutMs, intervalMs: 25 },
  );
}

/** Models named `<prefix><scenario>` served by `provider` with upstream model `<scenario>` (the mocks' behaviours). */
export function scenarioModelsFor(provider: string, prefix: string, scenarios: readonly string[]) {
  return scenarios.map((scenario) => ({
    name: `${prefix}${scenario}`,
    provider,
    upstream_model: scenario,
    pricing: { input: 3, output: 15, cached_input: 0.3, cache_write: 3.75 },
  }));
}

export function chatBody(model: string, extra: Record<string, unknown> = {}) {
  return { model, messages: [{ role: 'user', content: 'Say hello' }], ...extra };
}

export async function postChat(gateway: TestGateway, body: unknown, headers: Record<string, string> = {}) {
  return postV1(gateway, 'chat/completions', body, { headers });
}

/** POSTs `body` (serialized, or a string sent as it is) to /v1/`path` with the gateway's key or `options.key`. */
export function postV1(
  gateway: TestGateway,
  path: string,
  body: unknown,
  options: { headers?: Record<string, string>; key?: string; signal?: AbortSignal } = {},
): Promise<Response> {
  return fetch(`${gateway.baseUrl}/${path}`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${options.key ?? gateway.key}`,
      'content-type': 'application/json',
      ...options.headers,
    },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    signal: options.signal,
  });
}

/** A response body as JSON, loosely typed: tests assert on its shape. */
// biome-ignore lint/suspicious/noExplicitAny: test assertions walk arbitrary response bodies
export async function jsonOf(response: Response): Promise<any> {
  return response.json();
}
