/**
 * Generated text held back while it could still turn out to be the start of a stop sequence, released as soon as it
 * cannot: a client never receives text that a stop sequence later cuts (OpenAI's semantics: the stop sequence and
 * what follows are not part of the completion). Works on pieces (a token's text with its logprob): a piece is
 * released whole, or cut where a stop sequence begins.
 */

export interface TextPiece {
  text: string;
}

export interface HeldRelease<Piece> {
  /** Pieces that can go to the client now, in order. */
  release: Piece[];
  /** A stop sequence was found: the completion ends after `release`. */
  stopped: boolean;
}

export class HeldText<Piece extends TextPiece> {
  private held: Piece[] = [];

  constructor(private readonly stops: readonly string[]) {}

  push(piece: Piece): HeldRelease<Piece> {
    this.held.push(piece);
    if (this.stops.length === 0) return { release: this.take(this.held.length), stopped: false };
    const text = this.held.map((item) => item.text).join('');
    let stopAt = -1;
    for (const stop of this.stops) {
      const index = text.indexOf(stop);
      if (index !== -1 && (stopAt === -1 || index < stopAt)) stopAt = index;
    }
    if (stopAt !== -1) return { release: this.cut(stopAt), stopped: true };
    const keep = longestStopPrefixAtEnd(text, this.stops);
    const safe = text.length - keep;
    let released = 0;
    let end = 0;
    for (const item of this.held) {
      if (end + item.text.length > safe) break;
      end += item.text.length;
      released++;
    }
    return { release: this.take(released), stopped: false };
  }

  /** Everything still held (the generation ended without a stop sequence). */
  flush(): Piece[] {
    return this.take(this.held.length);
  }

  private take(count: number): Piece[] {
    return this.held.splice(0, count);
  }

  /** The held pieces up to `position` (the piece it falls in cut there, kept only if text remains before it). */
  private cut(position: number): Piece[] {
    const released: Piece[] = [];
    let start = 0;
    for (const item of this.held) {
      if (start >= position) break;
      const end = start + item.text.length;
      released.push(end <= position ? item : { ...item, text: item.text.slice(0, position - start) });
      start = end;
    }
    this.held = [];
    return released;
  }
}

/** The length of the longest end of `text` that a stop sequence starts with (a full match excluded). */
export function longestStopPrefixAtEnd(text: string, stops: readonly string[]): number {
  let longest = 0;
  for (const stop of stops) {
    for (let length = Math.min(stop.length - 1, text.length); length > longest; length--) {
      if (text.endsWith(stop.slice(0, length))) {
        longest = length;
        break;
      }
    }
  }
  return longest;
}
