import type { ServerResponse } from 'node:http';
import { expect } from 'vitest';
import type { TestGateway } from './gateway.js';
import type { RecordedRequest } from './mock-openai-upstream.js';
import { parseEvents, postResponses } from './responses.js';
import { waitFor } from './wait.js';

/**
 * A chat stream held in the middle until the test lets it finish: the mock handler sends the role and "first ", then
 * waits; `release(marker)` sends "last" and the end. A stream is named by the text of its last message (its marker), so
 * a test knows a response is still being generated without timing anything.
 */
export interface HeldStreams {
  handler: (request: RecordedRequest, response: ServerResponse) => void;
  /** Streams that reached the upstream so far. */
  readonly arrivals: number;
  release(marker: string): void;
}

export function createHeldStreams(model = 'gate-stream'): HeldStreams {
  const gates = new Map<string, () => void>();
  let arrivals = 0;
  const chunk = (delta: Record<string, unknown>, finish: string | null) =>
    `data: ${JSON.stringify({ id: 'chatcmpl-gate', object: 'chat.completion.chunk', created: 1, model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  return {
    handler(request, response) {
      arrivals++;
      const messages = request.body.messages as Array<{ content: unknown }>;
      const marker = String(messages.at(-1)?.content ?? '');
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write(chunk({ role: 'assistant', content: 'first ' }, null));
      gates.set(marker, () => {
        if (response.destroyed) return;
        response.write(chunk({ content: 'last' }, null));
        response.write(chunk({}, 'stop'));
        response.end('data: [DONE]\n\n');
      });
    },
    get arrivals() {
      return arrivals;
    },
    release(marker) {
      gates.get(marker)?.();
    },
  };
}

/**
 * A held stream of `/v1/responses` opened and read up to its `response.in_progress`: its response id, and `rest` to read
 * it to the end (once released).
 */
export async function openHeldStream(
  gateway: TestGateway,
  streams: HeldStreams,
  marker: string,
  body: Record<string, unknown> = {},
) {
  const before = streams.arrivals;
  const response = await postResponses(gateway, { model: 'gate-stream', stream: true, input: marker, ...body });
  expect(response.status).toBe(200);
  const reader = response.body?.getReader();
  if (!reader) throw new Error('no body');
  const decoder = new TextDecoder();
  let text = '';
  await waitFor('the stream to reach the upstream', () => streams.arrivals > before);
  while (!text.includes('event: response.in_progress')) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`the stream ended early: ${text}`);
    text += decoder.decode(value, { stream: true });
  }
  const created = parseEvents(text.slice(0, text.lastIndexOf('\n\n') + 2)).find(
    (event) => event.event === 'response.created',
  );
  const rest = async () => {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return text;
      text += decoder.decode(value, { stream: true });
    }
  };
  /** The events read so far once one of this type has been read (the stream still held). */
  const readUntil = async (type: string) => {
    for (;;) {
      const events = parseEvents(text.slice(0, text.lastIndexOf('\n\n') + 2));
      if (events.some((event) => event.event === type)) return events;
      const { value, done } = await reader.read();
      if (done) throw new Error(`the stream ended before ${type}: ${text}`);
      text += decoder.decode(value, { stream: true });
    }
  };
  return { id: created?.data.response.id as string, rest, readUntil, cancel: () => reader.cancel() };
}
