import { defaultBehaviour, type MockUpstream } from '../support/mock-openai-upstream.js';
import type { ServeProcess } from '../support/serve-process.js';

/** What the failure-mode tests share: a configuration of the mock upstream, requests, and reading /metrics. */

/**
 * Providers and models for a configuration: `mock` (fast JSON or stream), `slow` (a 50-piece stream, 5 s), `wait`
 * (JSON after 0.8 s), `held` (see holdModel). Prices are high on purpose ($10,000 per million tokens, so one request of the mock's ~15 tokens
 * costs about $0.15) so that a budget test is one or two requests.
 */
export function mockModels(mock: MockUpstream) {
  const pricing = { input: 10_000, output: 10_000 };
  return {
    providers: [{ name: 'mock', type: 'openai', base_url: mock.baseUrl }],
    models: [
      { name: 'mock', provider: 'mock', upstream_model: 'mock', pricing },
      { name: 'slow', provider: 'mock', upstream_model: 'slow-stream', pricing },
      { name: 'wait', provider: 'mock', upstream_model: 'slow-json', pricing },
      // Answered when the test says so (holdModel).
      { name: 'held', provider: 'mock', upstream_model: 'held', pricing },
    ],
  };
}

export interface ChatResult {
  status: number;
  id: string;
  code: string | undefined;
  body: string;
  headers: Headers;
}

/** POST /v1/chat/completions and read the whole answer; `stream` asks for SSE. */
export async function chat(
  node: Pick<ServeProcess, 'url'>,
  key: string,
  options: { model?: string; stream?: boolean; signal?: AbortSignal } = {},
): Promise<ChatResult> {
  const response = await fetch(`${node.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      model: options.model ?? 'mock',
      stream: options.stream === true,
      messages: [{ role: 'user', content: 'hi' }],
    }),
    signal: options.signal,
  });
  const body = await response.text();
  let code: string | undefined;
  if (response.status >= 400) code = (JSON.parse(body) as { error?: { code?: string } }).error?.code;
  return {
    status: response.status,
    id: response.headers.get('x-request-id') ?? '',
    code,
    body,
    headers: response.headers,
  };
}

/** The value of one series of /metrics (`name{labels}` as Prometheus prints it), or undefined when absent. */
export async function metric(node: Pick<ServeProcess, 'url'>, series: string): Promise<number | undefined> {
  const text = await (await fetch(`${node.url}/metrics`)).text();
  for (const line of text.split('\n')) {
    if (line.startsWith(`${series} `)) return Number(line.slice(series.length + 1));
  }
  return undefined;
}

/** /readyz's status and body. */
export async function readiness(node: Pick<ServeProcess, 'url'>): Promise<{ status: number; body: string }> {
  const response = await fetch(`${node.url}/readyz`);
  return { status: response.status, body: await response.text() };
}

/** Upstream answers held back until the test lets them go, so "accepted and in flight" is a fact, not a timing. */
export interface HeldModel {
  /** Requests the gateway has forwarded for this model (each is accepted and waiting for its upstream). */
  arrived(): number;
  /** Lets every held answer (and every later one) go. */
  release(): void;
}

/** Makes the mock hold requests for `model` until `release()`, then answer them as its `mock` model does. */
export function holdModel(mock: MockUpstream, model: string): HeldModel {
  let arrived = 0;
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  mock.on(model, async (request, response) => {
    arrived++;
    await released;
    await defaultBehaviour({ ...request, body: { ...request.body, model: 'mock' } }, response);
  });
  return { arrived: () => arrived, release };
}
