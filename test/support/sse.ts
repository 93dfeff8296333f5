/**
 * The one strict reader of the gateway's SSE answers, for every streaming test. Clients parse leniently, so a test
 * that only kept the `data:` payloads would miss a stray `event:` line, an unexpected comment, a wrong separator or
 * bytes between events. This reader checks the raw framing the gateway writes (src/upstream/sse.ts) exactly:
 * - every frame ends with `\n\n`; lines end with `\n` only; the text is valid UTF-8;
 * - OpenAI surfaces (chat and legacy completions): one `data: ` line per frame, JSON, closed by `data: [DONE]`;
 * - named surfaces: `event: <name>` then one `data: ` line of JSON whose `type` is the name; Responses closes with
 *   `data: [DONE]` as the chat surface does, Messages (Anthropic's format) has no `[DONE]`;
 * - a comment is only ever the keepalive (`: keepalive` as a frame of its own), counted.
 */

export type SseSurface = 'openai' | 'responses' | 'messages';

export interface SseFrame {
  event: string | undefined;
  data: string;
}

export interface StrictSse {
  /** The events (keepalives left out), with their raw data. */
  frames: SseFrame[];
  /** How many keepalive comments came, and how many of them before the first event. */
  keepalives: number;
  keepalivesBeforeFirstEvent: number;
}

export interface StrictSseOptions {
  /** `openai` (chat and legacy completions, the default), `responses` or `messages`. */
  surface?: SseSurface;
  /** Whether the stream must end with `data: [DONE]` (not on `messages`); false for a stream known to be cut short. */
  done?: boolean;
}

export function parseStrictSse(text: string, options: StrictSseOptions = {}): StrictSse {
  const surface = options.surface ?? 'openai';
  const named = surface !== 'openai';
  const endsWithDone = surface !== 'messages';
  const requireDone = endsWithDone && options.done !== false;
  const fail = (why: string, frame?: string): never => {
    throw new Error(`SSE framing: ${why}${frame === undefined ? '' : ` in ${JSON.stringify(frame.slice(0, 300))}`}`);
  };
  if (text.includes('\r')) fail('a carriage return (the gateway ends lines with \\n only)');
  if (text === '') fail('an empty stream');
  if (!text.endsWith('\n\n')) fail('the last frame is not closed by a blank line', text.slice(-300));
  const blocks = text.slice(0, -2).split('\n\n');
  const frames: SseFrame[] = [];
  let keepalives = 0;
  let keepalivesBeforeFirstEvent = 0;
  let sawDone = false;
  for (const block of blocks) {
    if (sawDone) fail('something after data: [DONE]', block);
    if (block === '') fail('an empty frame (more than one blank line in a row)');
    if (block.startsWith(':')) {
      if (block !== ': keepalive') fail('a comment other than the keepalive', block);
      keepalives++;
      if (frames.length === 0) keepalivesBeforeFirstEvent++;
      continue;
    }
    const lines = block.split('\n');
    let event: string | undefined;
    let dataLine: string | undefined;
    if (!named || lines.length === 1) {
      // [DONE] closes a Responses stream as a data-only frame; every other frame there is named.
      if (lines.length !== 1) fail('more than one line in a data-only frame', block);
      if (named && lines[0] !== 'data: [DONE]') fail('a named frame is "event: " then "data: "', block);
      dataLine = lines[0];
    } else {
      if (lines.length !== 2 || !lines[0]?.startsWith('event: '))
        fail('a named frame is "event: " then "data: "', block);
      event = lines[0]?.slice('event: '.length);
      dataLine = lines[1];
    }
    if (!dataLine?.startsWith('data: ')) fail('a frame without its "data: " line', block);
    const data = (dataLine as string).slice('data: '.length);
    if (data === '[DONE]') {
      if (!endsWithDone) fail(`data: [DONE] on the ${surface} surface`, block);
      sawDone = true;
      frames.push({ event, data });
      continue;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(data);
    } catch {
      fail('data that is not JSON', block);
    }
    if (event !== undefined && (parsed as { type?: unknown } | null)?.type !== event) {
      fail(`the event name differs from data.type (${JSON.stringify((parsed as { type?: unknown })?.type)})`, block);
    }
    frames.push({ event, data });
  }
  if (requireDone && !sawDone) fail('the stream does not end with data: [DONE]', blocks.at(-1));
  return { frames, keepalives, keepalivesBeforeFirstEvent };
}

/** Reads a whole SSE answer strictly (its bytes must be UTF-8, its content type text/event-stream). */
export async function readStrictSse(response: Response, options: StrictSseOptions = {}): Promise<StrictSse> {
  const contentType = response.headers.get('content-type') ?? '';
  if (!contentType.startsWith('text/event-stream')) {
    throw new Error(`SSE framing: content type ${contentType}, status ${response.status}: ${await response.text()}`);
  }
  const bytes = new Uint8Array(await response.arrayBuffer());
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new Error('SSE framing: the stream is not valid UTF-8');
  }
  return parseStrictSse(text, options);
}

/** The `data:` payloads of an OpenAI-surface stream (`[DONE]` included, last), after the strict checks. */
export async function readSse(response: Response, options: StrictSseOptions = {}): Promise<string[]> {
  return (await readStrictSse(response, options)).frames.map((frame) => frame.data);
}
