/**
 * How long a stored response and the conversation it continues are kept. A response alone expires `retention` after
 * it was created. One that continues a conversation needs every response before it alive at least as long as itself,
 * but raising each of them on every turn rewrites n rows at turn n (a 1,000-turn agent loop would rewrite half a
 * million multi-KB rows). So a continuation, and the responses before it that would expire before its retention ends,
 * are given `retention` plus a slack of a tenth of it: later turns within the slack find the whole conversation live
 * long enough and write nothing but their own row, and each response is rewritten at most once per slack however many
 * turns follow. The price: a conversation is kept up to that slack longer than `retention` after its last turn.
 */

/** A response of the conversation being continued, as loadConversation read it. */
export interface AncestorExpiry {
  responseId: string;
  /** Epoch milliseconds. */
  expiresAt: number;
}

export interface ConversationExpiry {
  /** When the new response expires. */
  expiresAt: number;
  /** The responses before it to raise to `expiresAt`: those that would expire before its retention ends. */
  extendedIds: string[];
}

/**
 * A tenth: at most 10% more storage than `retention` alone would keep, and a conversation's older responses are
 * rewritten at most ten times per `retention` of activity (3 days at the default 30).
 */
export function expirySlackMs(retentionMs: number): number {
  return Math.floor(retentionMs / 10);
}

export function conversationExpiry(
  ancestors: readonly AncestorExpiry[],
  now: number,
  retentionMs: number,
): ConversationExpiry {
  const needed = now + retentionMs;
  if (ancestors.length === 0) return { expiresAt: needed, extendedIds: [] };
  // Expiries only ever rise (the writer raises, never lowers), so one read at or past `needed` stays there.
  const extendedIds = ancestors
    .filter((ancestor) => ancestor.expiresAt < needed)
    .map((ancestor) => ancestor.responseId);
  return { expiresAt: needed + expirySlackMs(retentionMs), extendedIds };
}
