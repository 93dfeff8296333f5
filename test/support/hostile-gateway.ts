import { afterAll, beforeAll } from 'vitest';
import { startTestGateway, type TestGateway, upstreamSecret } from './gateway.js';
import { type MockUpstream, startMockUpstream } from './mock-openai-upstream.js';
import { type ScriptedResponse, type ScriptedUpstream, startScriptedUpstream } from './scripted-upstream.js';
import { waitFor } from './wait.js';

/**
 * A test gateway whose providers of every HTTP type (`hostile-openai`, `hostile-anthropic`, `hostile-gemini`) answer
 * whatever the test scripts on one scripted upstream, for the tests of misbehaving upstreams. Models of the same names
 * reach them (`hostile-native` through the OpenAI-compatible one's own /responses, `hostile-openai-embed` and
 * `hostile-gemini-embed` for embeddings), each with one attempt per request, so an exchange is one scripted answer.
 */

export interface HostileGateway {
  readonly gateway: TestGateway;
  readonly upstream: ScriptedUpstream;
}

export function useHostileGateway(): HostileGateway {
  let mock: MockUpstream | undefined;
  let upstream: ScriptedUpstream | undefined;
  let gateway: TestGateway | undefined;
  beforeAll(async () => {
    mock = await startMockUpstream();
    upstream = await startScriptedUpstream();
    // An upstream's long retry-after would pause the deployment (on purpose), and the pause would answer the next
    // exchanges: no wait counts as long here.
    const single = { retry: { attempts: 0, max_retry_after: '24h' }, pricing: { input: 3, output: 15 } };
    gateway = await startTestGateway({
      mock,
      config: { request_log: { flush_interval: '10ms' } },
      providers: [
        { name: 'hostile-openai', type: 'openai', base_url: `${upstream.url}/v1`, api_key: upstreamSecret },
        { name: 'hostile-anthropic', type: 'anthropic', base_url: `${upstream.url}/v1`, api_key: upstreamSecret },
        { name: 'hostile-gemini', type: 'gemini', base_url: `${upstream.url}/v1beta`, api_key: upstreamSecret },
      ],
      models: [
        { name: 'hostile-openai', provider: 'hostile-openai', upstream_model: 'gpt-4o-mini', ...single },
        {
          name: 'hostile-native',
          provider: 'hostile-openai',
          upstream_model: 'gpt-5',
          responses_api: 'native',
          ...single,
        },
        { name: 'hostile-anthropic', provider: 'hostile-anthropic', upstream_model: 'claude-sonnet-4-5', ...single },
        { name: 'hostile-gemini', provider: 'hostile-gemini', upstream_model: 'gemini-2.5-flash', ...single },
        {
          name: 'hostile-openai-embed',
          provider: 'hostile-openai',
          upstream_model: 'text-embedding-3-small',
          capabilities: ['embeddings'],
          ...single,
        },
        {
          name: 'hostile-gemini-embed',
          provider: 'hostile-gemini',
          upstream_model: 'gemini-embedding-001',
          capabilities: ['embeddings'],
          ...single,
        },
      ],
    });
  });
  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
    await mock?.close();
  });
  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('useHostileGateway is read before its beforeAll ran');
    return value;
  };
  return {
    get gateway() {
      return started(gateway);
    },
    get upstream() {
      return started(upstream);
    },
  };
}

/** The answer to one request whose upstream answers `answer`: status, headers, body text and request id. */
export async function exchangeWith(
  hostile: HostileGateway,
  path: string,
  body: unknown,
  answer: ScriptedResponse,
): Promise<{ response: Response; text: string; requestId: string }> {
  hostile.upstream.script([answer]);
  const response = await fetch(`${hostile.gateway.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${hostile.gateway.key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  return { response, text, requestId: response.headers.get('x-request-id') ?? '' };
}

/** The request's log rows once the batched writer has written them (one is expected; more are returned if there). */
export function logRowsOf(gateway: TestGateway, requestId: string): Promise<Record<string, unknown>[]> {
  return waitFor(
    `the log row of ${requestId}`,
    async () => {
      const rows = await gateway.gateway.database.db
        .selectFrom('request_log')
        .selectAll()
        .where('request_id', '=', requestId)
        .execute();
      return rows.length > 0 && (rows as Record<string, unknown>[]);
    },
    { intervalMs: 5 },
  );
}
