/**
 * The one SSE parser and the one SSE writer. The parser follows the WHATWG event-stream rules that matter for LLM
 * APIs: `\n`, `\r` and `\r\n` line endings, multi-line `data:` joined with `\n`, comments (`:`) ignored, an event
 * dispatched at a blank line. It splits lines in the bytes and decodes only whole lines: the bytes of `\n` and `\r`
 * never occur inside a UTF-8 character, so one split across chunks is whole by the end of its line, and no streaming
 * decoder is kept per stream (docs/performance.md#memory).
 */

export interface SseEvent {
  /** The `event:` name, when the upstream sent one (Anthropic does; OpenAI does not). */
  event: string | undefined;
  data: string;
}

const lineFeed = 10;
const carriageReturn = 13;

export class SseParser {
  /** The bytes of a line not ended yet (a chunk may end anywhere, within a character too). */
  private pending: Buffer | undefined;
  private dataLines: string[] = [];
  private eventName: string | undefined;
  private sawCarriageReturn = false;
  /** Until the first line: a byte-order mark there is dropped, as UTF-8 decoding of a whole stream does. */
  private firstLine = true;

  /** Feeds bytes; returns the events completed by them. */
  push(chunk: Uint8Array): SseEvent[] {
    const events: SseEvent[] = [];
    const received = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    const bytes = this.pending === undefined ? received : Buffer.concat([this.pending, received]);
    this.pending = undefined;
    let start = 0;
    // A "\r\n" split across two chunks: the "\n" belongs to the line already ended by "\r".
    if (this.sawCarriageReturn && bytes.length > 0) {
      if (bytes[0] === lineFeed) start = 1;
      this.sawCarriageReturn = false;
    }
    for (let index = start; index < bytes.length; index++) {
      const byte = bytes[index];
      if (byte !== lineFeed && byte !== carriageReturn) continue;
      this.processLine(bytes.toString('utf8', start, index), events);
      if (byte === carriageReturn) {
        if (index + 1 < bytes.length) {
          if (bytes[index + 1] === lineFeed) index++;
        } else {
          this.sawCarriageReturn = true;
        }
      }
      start = index + 1;
    }
    // Copied: a view would keep the whole chunk for the rest of the line.
    if (start < bytes.length) this.pending = Buffer.from(bytes.subarray(start));
    return events;
  }

  /** Ends the stream; returns an event left without its terminating blank line, if any. */
  end(): SseEvent[] {
    return this.push(Buffer.from('\n\n'));
  }

  private processLine(text: string, events: SseEvent[]): void {
    let line = text;
    if (this.firstLine) {
      this.firstLine = false;
      if (line.charCodeAt(0) === 0xfeff) line = line.slice(1);
    }
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
