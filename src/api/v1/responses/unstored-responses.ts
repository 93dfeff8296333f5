/**
 * Responses this node answered but could not store, because they grew past `responses.max_stored_bytes` while they
 * were generated (the request itself was small enough to be accepted): a continuation of one is told why it cannot be
 * continued rather than "not found". Bounded (the oldest forgotten first) and kept in memory only: the answer itself
 * said `"store": false`, which is what a client on another node, or after a restart, has to go by.
 */

export interface UnstoredResponse {
  accountId: string;
  /** The bytes it would have taken to store. */
  bytes: number;
  /** The limit it was over. */
  limitBytes: number;
}

const defaultMaxEntries = 10_000;

export class UnstoredResponses {
  private readonly entries = new Map<string, UnstoredResponse>();

  constructor(private readonly maxEntries = defaultMaxEntries) {}

  add(id: string, entry: UnstoredResponse): void {
    this.entries.delete(id);
    this.entries.set(id, entry);
    // A Map iterates in insertion order: its first key is the oldest.
    while (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next().value as string;
      this.entries.delete(oldest);
    }
  }

  /** The account's unstored response; undefined for another account's, as for none. */
  of(accountId: string, id: string): UnstoredResponse | undefined {
    const entry = this.entries.get(id);
    return entry?.accountId === accountId ? entry : undefined;
  }
}
