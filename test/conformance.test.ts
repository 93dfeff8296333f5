import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postChat, startTestGateway, type TestGateway, upstreamSecret, waitForLogRows } from './support/gateway.js';
import { goldenDifferences } from './support/golden.js';
import { type MockUpstream, startMockUpstream } from './support/mock-openai-upstream.js';
import { type ScriptedResponse, type ScriptedUpstream, startScriptedUpstream } from './support/scripted-upstream.js';
import { readSse } from './support/sse.js';

/**
 * The conformance suite: golden transcripts per provider (request in, upstream wire exchange, response out, log row),
 * replayed against an upstream that answers in the provider's real wire format. Every provider folder under
 * fixtures/conformance/ answers the same scenarios, so a new provider is one folder plus fixtures; a missing scenario
 * fails. `npm run test:update-golden` (scripts/update-golden.sh) records what the gateway actually did into the
 * fixtures, to be reviewed before committing: with UPDATE_GOLDEN=1 every scenario is written and then fails, so a
 * recording run can never pass for a checked one; the script then replays the recorded fixtures as a normal run.
 */

const fixturesRoot = path.join(import.meta.dirname, 'fixtures', 'conformance');
const update = process.env.UPDATE_GOLDEN === '1';

const scenarios = [
  'text',
  'text-stream',
  'image',
  'tools',
  'tool-results',
  'tools-stream',
  'usage',
  'usage-stream',
  'json-schema',
  'length',
  'error-invalid',
  'error-context-length',
  'error-rate-limit',
  'error-overloaded',
  'midstream-error',
  'midstream-truncated',
] as const;

/** The columns of the log row a transcript pins down. */
const loggedColumns = [
  'status',
  'outcome',
  'error_code',
  'prompt_tokens',
  'completion_tokens',
  'cached_tokens',
  'cache_write_tokens',
  'reasoning_tokens',
  'usage_estimated',
  'cost_usd',
] as const;

/** Response headers a transcript may pin down. */
const checkedHeaders = ['retry-after', 'retry-after-ms', 'x-switchboard-dropped-parameters'];

interface ProviderFixture {
  /** The provider's `type` in the configuration. */
  type: string;
  /** Appended to the upstream's URL to make the provider's base_url. */
  base_path: string;
  upstream_model: string;
  /** Extra provider settings. */
  settings?: Record<string, unknown>;
}

interface Transcript {
  description: string;
  /** Extra model settings for this scenario (e.g. max_output_tokens). */
  model?: Record<string, unknown>;
  request: Record<string, unknown>;
  upstream: {
    request: { method: string; path: string; headers: Record<string, string>; body: unknown };
    response: ScriptedResponse;
  };
  response: { status: number; headers?: Record<string, string>; json?: unknown; sse?: unknown[] };
  log: Record<string, unknown>;
}

/**
 * Values that change on every run become placeholders when a transcript is recorded: `created` timestamps, and tool
 * call ids the gateway minted (ids that came from the upstream's own response are kept exact).
 */
function placeholders(value: unknown, upstreamText: string, key = ''): unknown {
  if (Array.isArray(value)) return value.map((item) => placeholders(item, upstreamText));
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value).map(([name, item]) => [name, placeholders(item, upstreamText, name)]),
    );
  }
  if (key === 'created' && typeof value === 'number' && !upstreamText.includes(String(value))) return '{{number}}';
  if (
    key === 'id' &&
    typeof value === 'string' &&
    /^call_[A-Za-z0-9]{24}/.test(value) &&
    !upstreamText.includes(value)
  ) {
    const signature = value.indexOf('__sig_');
    return signature === -1
      ? '{{match:^call_[A-Za-z0-9]{24}$}}'
      : `{{match:^call_[A-Za-z0-9]{24}${value.slice(signature).replace(/[-]/g, '\\-')}$}}`;
  }
  return value;
}

const providers = readdirSync(fixturesRoot).filter((entry) =>
  existsSync(path.join(fixturesRoot, entry, 'provider.json')),
);

describe.each(providers)('conformance: %s', (providerName) => {
  const folder = path.join(fixturesRoot, providerName);
  const provider = JSON.parse(readFileSync(path.join(folder, 'provider.json'), 'utf8')) as ProviderFixture;
  const transcripts = new Map<string, Transcript>();
  for (const scenario of scenarios) {
    const file = path.join(folder, `${scenario}.json`);
    if (existsSync(file)) transcripts.set(scenario, JSON.parse(readFileSync(file, 'utf8')));
  }
  let mock: MockUpstream;
  let upstream: ScriptedUpstream;
  let gateway: TestGateway;

  beforeAll(async () => {
    mock = await startMockUpstream();
    upstream = await startScriptedUpstream();
    gateway = await startTestGateway({
      mock,
      providers: [
        {
          name: providerName,
          type: provider.type,
          base_url: `${upstream.url}${provider.base_path}`,
          api_key: upstreamSecret,
          ...provider.settings,
        },
      ],
      models: [...transcripts.entries()].map(([scenario, transcript]) => ({
        name: `${providerName}-${scenario}`,
        provider: providerName,
        upstream_model: provider.upstream_model,
        // One attempt: each transcript scripts one upstream exchange.
        retry: { attempts: 0 },
        pricing: { input: 3, output: 15, cached_input: 0.3, cache_write: 3.75 },
        ...transcript.model,
      })),
    });
  });

  afterAll(async () => {
    await gateway.close();
    await upstream.close();
    await mock.close();
  });

  it('has a transcript for every scenario', () => {
    expect(scenarios.filter((scenario) => !transcripts.has(scenario))).toEqual([]);
  });

  it.each(scenarios)('%s', async (scenario) => {
    const transcript = transcripts.get(scenario);
    if (!transcript) return;
    upstream.script([transcript.upstream.response]);
    const before = upstream.requests.length;
    const response = await postChat(gateway, { ...transcript.request, model: `${providerName}-${scenario}` });
    const requestId = response.headers.get('x-request-id') as string;
    const isStream = (response.headers.get('content-type') ?? '').startsWith('text/event-stream');
    const body = isStream
      ? (await readSse(response)).map((data) => (data === '[DONE]' ? data : JSON.parse(data)))
      : await response.json();
    const sent = upstream.requests[before];
    expect(upstream.requests.length - before, 'one upstream request').toBe(1);
    if (!sent) throw new Error('the upstream received nothing');
    const [row] = await waitForLogRows(gateway, [requestId]);
    const logged = Object.fromEntries(loggedColumns.map((column) => [column, row?.[column]]));
    const headers = Object.fromEntries(
      checkedHeaders
        .filter((name) => response.headers.has(name))
        .map((name) => [name, String(response.headers.get(name))]),
    );

    const actual: Transcript = {
      ...transcript,
      upstream: {
        request: {
          method: sent.method,
          path: sent.path,
          headers: Object.fromEntries(
            Object.keys(transcript.upstream.request.headers).map((name) => [name, String(sent.headers[name])]),
          ),
          body: sent.body,
        },
        response: transcript.upstream.response,
      },
      response: {
        status: response.status,
        ...(Object.keys(headers).length > 0 ? { headers } : {}),
        ...(isStream ? { sse: body as unknown[] } : { json: body }),
      },
      log: logged,
    };
    // The client's key never reaches an upstream; the provider's key always does.
    expect(JSON.stringify(sent.headers)).not.toContain(gateway.key);
    expect(JSON.stringify(sent.headers)).toContain(upstreamSecret);
    if (update) {
      const upstreamText = JSON.stringify(transcript.upstream.response);
      const file = path.join(folder, `${scenario}.json`);
      writeFileSync(file, `${JSON.stringify(placeholders(actual, upstreamText), null, 2)}\n`);
      // Recording checks nothing against the transcript, so a recording run is never a passing run.
      expect.fail(`recorded ${path.relative(fixturesRoot, file)} (UPDATE_GOLDEN=1): review it, then run the tests`);
    }
    expect(goldenDifferences(actual.upstream.request, transcript.upstream.request, 'upstream.request')).toEqual([]);
    expect(goldenDifferences(actual.response, transcript.response, 'response')).toEqual([]);
    expect(goldenDifferences(actual.log, transcript.log, 'log')).toEqual([]);
  });
});
