import { expect } from 'vitest';
import type { TestGateway } from './gateway.js';

/**
 * What every answer to bad input must be, whichever endpoint: a 2xx of the endpoint's own shape, or a 4xx in the
 * surface's error body (OpenAI's `{error:{message,type,param,code}}`, Anthropic's `{type:"error",error:{type,
 * message}}` on /v1/messages) with a message, never a 5xx. Shared by the generated bad-input tests.
 */

export type Surface = 'openai' | 'anthropic';

export interface Answer {
  status: number;
  requestId: string;
  text: string;
  contentType: string;
  /** What the gateway left out because the model cannot take it (`x-switchboard-dropped-parameters`). */
  dropped: string[];
  /** The parsed body of a non-2xx answer. */
  // biome-ignore lint/suspicious/noExplicitAny: test assertions walk arbitrary error bodies
  error?: any;
}

/** POSTs raw bytes (or text) to a /v1 path with the gateway's key, in both surfaces' headers. */
export async function postRaw(
  gateway: TestGateway,
  path: string,
  body: string | Buffer,
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(`${gateway.url}${path}`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${gateway.key}`,
      'anthropic-version': '2023-06-01',
      'content-type': 'application/json',
      ...headers,
    },
    // A Buffer is copied into a plain Uint8Array: fetch's types take no Buffer.
    body: typeof body === 'string' ? body : new Uint8Array(body),
  });
}

/** Reads the answer and checks the rules every answer follows; `context` is printed on failure. */
export async function readAnswer(response: Response, surface: Surface, context: string): Promise<Answer> {
  const text = await response.text();
  const status = response.status;
  const where = `${context.slice(0, 800)}\n-> ${status} ${text.slice(0, 800)}`;
  const requestId = response.headers.get('x-request-id') ?? '';
  expect(requestId, where).toMatch(/^req_[0-9a-f]{32}$/);
  expect(status, where).toBeLessThan(500);
  const contentType = response.headers.get('content-type') ?? '';
  const dropped = (response.headers.get('x-switchboard-dropped-parameters') ?? '')
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
  if (status < 300) return { status, requestId, text, contentType, dropped };
  expect(contentType, where).toMatch(/^application\/json/);
  const body = JSON.parse(text);
  if (surface === 'openai') {
    expect(Object.keys(body).sort(), where).toEqual(['error']);
    expect(Object.keys(body.error).sort(), where).toEqual(['code', 'message', 'param', 'type']);
    expect(typeof body.error.type, where).toBe('string');
    expect(body.error.param === null || typeof body.error.param === 'string', where).toBe(true);
  } else {
    expect(body.type, where).toBe('error');
    expect(typeof body.error.type, where).toBe('string');
  }
  expect(typeof body.error.message, where).toBe('string');
  expect(body.error.message.trim().length, where).toBeGreaterThan(0);
  return { status, requestId, text, contentType, dropped, error: body.error };
}

/**
 * The field an error names: OpenAI's `param`, or the path Anthropic's message starts with. Bracketed steps are read
 * too (`messages[2].tool_calls[0]`): they are no Anthropic path, so a message naming the translated chat request's
 * field instead of the client's fails `pointsInto`.
 */
export function namedField(answer: Answer, surface: Surface): string | null {
  if (!answer.error) return null;
  if (surface === 'openai') return answer.error.param;
  const match = /^([A-Za-z_][\w.[\]]*): /.exec(answer.error.message);
  return match?.[1] ?? null;
}

/** A field in OpenAI's bracket form (`messages[2].content`) anywhere in an Anthropic message: never the client's. */
export function namesChatPath(answer: Answer): boolean {
  return /\b(messages|tools|tool_calls|content)\[\d+\]/.test(answer.error?.message ?? '');
}

/** A path as the surface writes it: `messages[0].content` (OpenAI) or `messages.0.content` (Anthropic). */
export function fieldName(path: readonly (string | number)[], surface: Surface): string {
  if (surface === 'anthropic') return path.join('.');
  return path.map((step, index) => (typeof step === 'number' ? `[${step}]` : index === 0 ? step : `.${step}`)).join('');
}

/**
 * Whether a field name points into the request: every step but the last exists in it (the last may be the missing
 * member the error is about). With `whole`, the last step must exist too (a value that is there but refused).
 *
 * The name is read against the request itself, not split on `.` and `[`: a member's own name may hold dots,
 * brackets, quotes or spaces (`metadata. ] ` names the key " ] " of `metadata`). At each level a member matches when
 * the rest of the name starts with it and goes on with nothing, `.` or `[`; when several do (keys `a` and `a.b`),
 * each is tried. Array elements are `[2]` (OpenAI) or `.2` (Anthropic). A missing last member is a plain name.
 */
export function pointsInto(request: unknown, name: string, whole = false): boolean {
  // An empty name is a member called '' or nothing at all.
  if (name === '') return typeof request === 'object' && request !== null && Object.hasOwn(request, '');
  return resolves(request, name, whole);
}

/** Whether `rest` (a name without its leading `.`, or starting with `[`) resolves from `value`. */
function resolves(value: unknown, rest: string, whole: boolean): boolean {
  if (value === null || typeof value !== 'object') return false;
  const after = (matched: number, member: unknown): boolean => {
    const remaining = rest.slice(matched);
    if (remaining === '') return true;
    if (remaining.startsWith('.')) return resolves(member, remaining.slice(1), whole);
    return remaining.startsWith('[') && resolves(member, remaining, whole);
  };
  if (Array.isArray(value)) {
    const index = /^\[(\d+)\]|^(\d+)(?=$|[.[])/.exec(rest);
    if (!index) return false;
    const position = Number(index[1] ?? index[2]);
    if (position < value.length) return after(index[0].length, value[position]);
    return !whole && index[0].length === rest.length;
  }
  const members = Object.keys(value).filter(
    (key) => rest.startsWith(key) && (rest.length === key.length || '.['.includes(rest.charAt(key.length))),
  );
  for (const key of members) {
    if (after(key.length, (value as Record<string, unknown>)[key])) return true;
  }
  return !whole && !/[.[\]]/.test(rest);
}

/** What a successful answer of each endpoint looks like (a stream: every event JSON, ending with its last one). */
export function expectValidSuccess(endpoint: string, answer: Answer, context: string): void {
  const where = `${context.slice(0, 600)}\n-> ${answer.status} ${answer.text.slice(0, 600)}`;
  if (answer.contentType.startsWith('text/event-stream')) {
    const events = answer.text.split('\n\n').filter((block) => block.trim() !== '' && !block.startsWith(':'));
    const last = events.at(-1) ?? '';
    expect(last, where).toMatch(
      /^data: \[DONE\]$|^event: (response\.(completed|incomplete|failed)|message_stop|error)\n/,
    );
    for (const event of events) {
      const data = event.split('\n').find((line) => line.startsWith('data: '));
      expect(data, where).toBeDefined();
      if (data !== 'data: [DONE]') JSON.parse((data as string).slice('data: '.length));
    }
    return;
  }
  expect(answer.contentType, where).toMatch(/^application\/json/);
  const body = JSON.parse(answer.text);
  switch (endpoint) {
    case '/v1/chat/completions':
      expect(body.object, where).toBe('chat.completion');
      expect(body.choices.length, where).toBeGreaterThan(0);
      expect(body.choices[0].message.role, where).toBe('assistant');
      break;
    case '/v1/completions':
      expect(body.object, where).toBe('text_completion');
      expect(typeof body.choices[0].text, where).toBe('string');
      break;
    case '/v1/embeddings':
      expect(body.object, where).toBe('list');
      expect(body.data.length, where).toBeGreaterThan(0);
      break;
    case '/v1/responses':
      expect(body.object, where).toBe('response');
      expect(Array.isArray(body.output), where).toBe(true);
      break;
    case '/v1/messages':
      expect(body.type, where).toBe('message');
      expect(Array.isArray(body.content), where).toBe(true);
      break;
    case '/v1/messages/count_tokens':
      expect(Number.isInteger(body.input_tokens), where).toBe(true);
      expect(body.input_tokens, where).toBeGreaterThan(0);
      break;
    default:
      throw new Error(`no success shape for ${endpoint}`);
  }
}
