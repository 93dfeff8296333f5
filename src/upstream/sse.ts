/**
 * The one SSE parser and the one SSE writer. The parser follows the WHATWG event-stream rules that matter for LLM
 * APIs: `\n`, `\r` and `\r\n` line endings, multi-line `data:` joined with `\n`, comments (`:`) ignored, an event
 * dispatched at a blank line. Bytes are decoded as a stream so a UTF-8 character split across chunks survives.
 */

export interface SseEvent {
  /** The `event:` name, when the upstream sent one (Anthropic does; OpenAI does not). */
  event: string | undefined;
  data: string;
}

export class SseParser {
  private readonly decoder = new TextDecoder('utf-8');
  private buffer = '';
  private dataLines: string[] = [];
  private eventName: string | undefined;
  private sawCarriageReturn = false;

  /** Feeds bytes; returns the events completed by them. */
  push(chunk: Uint8Array): SseEvent[] {
    return this.consume(this.decoder.decode(chunk, { stream: true }));
  }

  /** Ends the stream; returns an event left without its terminating blank line, if any. */
  end(): SseEvent[] {
    const events = this.consume(`${this.decoder.decode()}\n\n`);
    return events;
  }

  private consume(text: string): SseEvent[] {
    const events: SseEvent[] = [];
    let input = text;
    // A "\r\n" split across two chunks: the "\n" belongs to the line already ended by "\r".
    if (this.sawCarriageReturn && input.startsWith('\n')) input = input.slice(1);
    this.sawCarriageReturn = false;
    this.buffer += input;
    let start = 0;
    const buffer = this.buffer;
    for (let index = 0; index < buffer.length; index++) {
      const character = buffer.charCodeAt(index);
      if (character !== 10 && character !== 13) continue;
      this.processLine(buffer.slice(start, index), events);
      if (character === 13) {
        if (index + 1 < buffer.length) {
          if (buffer.charCodeAt(index + 1) === 10) index++;
        } else {
          this.sawCarriageReturn = true;
        }
      }
      start = index + 1;
    }
    this.buffer = buffer.slice(start);
    return events;
  }

  private processLine(line: string, events: SseEvent[]): void {
    if (line === '') {
      if (this.dataLines.length > 0) events.push({ event: this.eventName, data: this.dataLines.join('\n') });
      this.dataLines = [];
      this.eventName = undefined;
      return;
    }
    if (line.charCodeAt(0) === 58 /* ':' comment */) return;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.charCodeAt(0) === 32) value = value.slice(1);
    if (field === 'data') this.dataLines.push(value);
    else if (field === 'event') this.eventName = value;
  }
}

export const sseHeaders: Readonly<Record<string, string>> = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache, no-transform',
  connection: 'keep-alive',
  // nginx and similar reverse proxies buffer responses unless told not to; every chunk must reach the client at once.
  'x-accel-buffering': 'no',
};

export function sseData(json: string): string {
  return `data: ${json}\n\n`;
}

export const sseDone = 'data: [DONE]\n\n';
export const sseKeepalive = ': keepalive\n\n';

/**
 * A named event (`event: <name>`), as the Responses API and Anthropic's streams are framed (an unnamed one without
 * the field); each line of
 * `data` gets its own `data:` field.
 */
export function sseEvent(name: string | undefined, data: string): string {
  const lines = data.includes('\n') ? data.split('\n').join('\ndata: ') : data;
  return name === undefined ? `data: ${lines}\n\n` : `event: ${name}\ndata: ${lines}\n\n`;
}
