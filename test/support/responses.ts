import { jsonOf, type TestGateway } from './gateway.js';

/** Helpers for /v1/responses tests: requests with a key, and an SSE body read as its events. */

export function postResponses(gateway: TestGateway, body: unknown, key = gateway.key) {
  return fetch(`${gateway.baseUrl}/responses`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

export function getStored(gateway: TestGateway, path: string, key = gateway.key, method = 'GET') {
  return fetch(`${gateway.baseUrl}/responses/${path}`, { method, headers: { authorization: `Bearer ${key}` } });
}

export interface ReadEvent {
  /** The `event:` line. */
  event: string | undefined;
  /** The `data:` line, parsed (or the raw text for `[DONE]`). */
  // biome-ignore lint/suspicious/noExplicitAny: tests walk arbitrary event payloads
  data: any;
}

/** The events of an SSE body, framing checked: `\n\n` between events, one `data:` line each. */
export function parseEvents(text: string): ReadEvent[] {
  const blocks = text.split('\n\n').filter((block) => block !== '' && !block.startsWith(':'));
  return blocks.map((block) => {
    const lines = block.split('\n');
    const eventLine = lines.find((line) => line.startsWith('event: '));
    const dataLines = lines.filter((line) => line.startsWith('data: '));
    if (dataLines.length !== 1) throw new Error(`an event without exactly one data line: ${block}`);
    const data = (dataLines[0] as string).slice('data: '.length);
    return { event: eventLine?.slice('event: '.length), data: data === '[DONE]' ? data : JSON.parse(data) };
  });
}

/**
 * A `/v1/responses` call (`store: false` unless the body says otherwise) read whole: its status, its
 * `x-switchboard-dropped-parameters`, and the response object (for a stream, the one `response.completed` carries).
 */
export async function respondTo(gateway: TestGateway, body: Record<string, unknown>) {
  const response = await postResponses(gateway, { input: 'Say hello', store: false, ...body });
  const dropped = response.headers.get('x-switchboard-dropped-parameters');
  if (body.stream !== true) return { status: response.status, dropped, body: await jsonOf(response) };
  const events = parseEvents(await response.text());
  const completed = events.find((event) => event.event === 'response.completed')?.data as Record<string, unknown>;
  return { status: response.status, dropped, body: completed?.response as Record<string, unknown> };
}
