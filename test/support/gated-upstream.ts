import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A gate in front of a mock upstream (any provider's: it relays bytes), holding an answer where a test says: before
 * its status line, or after some of its pieces (SSE events, or the first half of a JSON body), until the gateway hangs
 * up. A test then knows exactly where the upstream stood when its client left, without timing. Requests are matched to
 * their plan by a marker the test put in the request's text; requests without one pass straight through.
 */

export interface GatePlan {
  /** Hold the answer before its status line and headers. */
  holdHeaders?: boolean;
  /** Pieces of the answer sent before holding (clamped to all but the last); absent: all of them, and the end. */
  piecesBeforeHold?: number;
  /** Answer the first attempt 503 (a transient failure the gateway retries after its backoff). */
  failFirst?: boolean;
}

/** A 503 every provider's client reads as an overloaded upstream (OpenAI's, Anthropic's and Google's fields at once). */
const overloaded = JSON.stringify({
  type: 'error',
  error: { type: 'overloaded_error', message: 'gate: overloaded', code: 503, status: 'UNAVAILABLE' },
});

export interface GatedExchange {
  readonly marker: string | undefined;
  /** Pieces of the mock's answer (SSE events, or the two halves of a JSON body); 0 until the mock answered. */
  totalPieces: number;
  piecesSent: number;
  headersSent: boolean;
  /** The gateway hung up before the answer was complete: the upstream request was aborted. */
  aborted: boolean;
  /** The answer went out whole. */
  finished: boolean;
}

export interface GatedUpstream {
  url: string;
  /** What to do with the request whose text contains `marker`. */
  plan(marker: string, plan: GatePlan): void;
  exchangesFor(marker: string): GatedExchange[];
  /** Answers neither finished nor aborted: upstream connections still streaming. */
  readonly open: number;
  close(): Promise<void>;
}

const hopByHop = new Set(['connection', 'keep-alive', 'transfer-encoding', 'host', 'content-length']);

function forwardedHeaders(headers: IncomingHttpHeaders): Record<string, string | string[]> {
  const result: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined && !hopByHop.has(name)) result[name] = value;
  }
  return result;
}

/** An event stream's events (each with its blank line), or a body's two halves. */
function piecesOf(body: Buffer, contentType: string | undefined): Buffer[] {
  if (contentType?.startsWith('text/event-stream')) {
    const text = body.toString('utf8');
    const events = text.match(/[\s\S]*?\r?\n\r?\n/g) ?? [];
    const rest = text.slice(events.join('').length);
    return [...events, ...(rest ? [rest] : [])].map((event) => Buffer.from(event, 'utf8'));
  }
  if (body.length < 2) return [body];
  const half = Math.floor(body.length / 2);
  return [body.subarray(0, half), body.subarray(half)];
}

/** A gate forwarding to the mock at `target()` (read per request, so it may be set after the gate starts). */
export async function startGatedUpstream(target: () => string): Promise<GatedUpstream> {
  const plans = new Map<string, GatePlan>();
  const exchanges: GatedExchange[] = [];
  let open = 0;
  const server: Server = createServer((incoming, response) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      const body = Buffer.concat(chunks);
      const text = body.toString('utf8');
      const marker = [...plans.keys()].find((candidate) => text.includes(candidate));
      const plan = (marker === undefined ? undefined : plans.get(marker)) ?? {};
      const exchange: GatedExchange = {
        marker,
        totalPieces: 0,
        piecesSent: 0,
        headersSent: false,
        aborted: false,
        finished: false,
      };
      const firstAttempt = marker !== undefined && !exchanges.some((earlier) => earlier.marker === marker);
      exchanges.push(exchange);
      open++;
      response.on('close', () => {
        open--;
        if (response.writableFinished) exchange.finished = true;
        else exchange.aborted = true;
      });
      if (plan.failFirst && firstAttempt) {
        exchange.totalPieces = 1;
        exchange.headersSent = true;
        response.writeHead(503, {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(overloaded),
        });
        response.end(overloaded);
        exchange.piecesSent = 1;
        return;
      }
      const forwarded = httpRequest(
        `${target()}${incoming.url ?? '/'}`,
        { method: incoming.method, headers: { ...forwardedHeaders(incoming.headers), 'content-length': body.length } },
        (answer) => {
          const answerChunks: Buffer[] = [];
          answer.on('data', (chunk: Buffer) => answerChunks.push(chunk));
          answer.on('end', () => {
            if (response.destroyed) return;
            const whole = Buffer.concat(answerChunks);
            const pieces = piecesOf(whole, answer.headers['content-type']);
            exchange.totalPieces = pieces.length;
            if (plan.holdHeaders) return;
            const headers = forwardedHeaders(answer.headers);
            const sse = answer.headers['content-type']?.startsWith('text/event-stream') === true;
            response.writeHead(
              answer.statusCode ?? 502,
              sse ? headers : { ...headers, 'content-length': whole.length },
            );
            exchange.headersSent = true;
            const count =
              plan.piecesBeforeHold === undefined ? pieces.length : Math.min(plan.piecesBeforeHold, pieces.length - 1);
            for (const piece of pieces.slice(0, count)) response.write(piece);
            exchange.piecesSent = count;
            if (count === pieces.length) response.end();
            // Otherwise held until the gateway hangs up.
          });
        },
      );
      forwarded.on('error', () => response.destroy());
      forwarded.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    plan: (marker, plan) => {
      plans.set(marker, plan);
    },
    exchangesFor: (marker) => exchanges.filter((exchange) => exchange.marker === marker),
    get open() {
      return open;
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
