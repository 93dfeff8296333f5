/**
 * Signed thinking (Claude's, as chat answers carry it in `thinking_blocks`) inside a Responses reasoning item's
 * `encrypted_content`, so that a client sending the item back (Codex resends its whole history with `store: false`)
 * brings the thinking back losslessly. The envelope is `sb-thinking-v1.` followed by the base64url JSON
 * `{"blocks": [...]}`: the blocks as they came, `{type: "thinking", thinking, signature}` and
 * `{type: "redacted_thinking", data}`. Nothing in it is secret (the client had the blocks in the chat answer
 * anyway), and Anthropic checks each signature against its text, so a forged envelope gains nothing. Anything that
 * is not a well-formed envelope of this version (OpenAI's own encrypted reasoning, another gateway's, a damaged one)
 * decodes to undefined.
 */

export type ThinkingBlock =
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'redacted_thinking'; data: string };

const prefix = 'sb-thinking-v1.';

export function encodeThinking(blocks: readonly ThinkingBlock[]): string {
  return prefix + Buffer.from(JSON.stringify({ blocks }), 'utf8').toString('base64url');
}

/** Whether the value is one of the gateway's envelopes (by its prefix, without decoding it). */
export function isThinkingEnvelope(value: unknown): boolean {
  return typeof value === 'string' && value.startsWith(prefix);
}

function thinkingBlockOf(value: unknown): ThinkingBlock | undefined {
  if (!value || typeof value !== 'object') return undefined;
  const block = value as Record<string, unknown>;
  if (block.type === 'thinking' && typeof block.thinking === 'string' && typeof block.signature === 'string') {
    return { type: 'thinking', thinking: block.thinking, signature: block.signature };
  }
  if (block.type === 'redacted_thinking' && typeof block.data === 'string') {
    return { type: 'redacted_thinking', data: block.data };
  }
  return undefined;
}

/** The blocks of an envelope; undefined for anything else, a malformed envelope included. */
export function decodeThinking(value: unknown): ThinkingBlock[] | undefined {
  if (typeof value !== 'string' || !value.startsWith(prefix)) return undefined;
  const encoded = value.slice(prefix.length);
  if (!/^[A-Za-z0-9_-]*$/.test(encoded)) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(encoded, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  const list = (parsed as { blocks?: unknown } | null)?.blocks;
  if (!Array.isArray(list) || list.length === 0) return undefined;
  const blocks: ThinkingBlock[] = [];
  for (const entry of list) {
    const block = thinkingBlockOf(entry);
    if (!block) return undefined;
    blocks.push(block);
  }
  return blocks;
}

/**
 * The complete blocks of a chat answer's `thinking_blocks` (a whole message's list, or stream fragments joined by
 * their `index`): thinking with its signature, redacted thinking. A thinking block without a signature (reasoning
 * another provider wrote) cannot be sent back to Anthropic and is left out.
 */
export function completeThinkingBlocks(entries: readonly unknown[]): ThinkingBlock[] {
  return entries.flatMap((entry): ThinkingBlock[] => {
    const block = thinkingBlockOf(entry);
    if (!block || (block.type === 'thinking' && block.signature === '')) return [];
    return [block];
  });
}

/**
 * Whether a response carries signed thinking in `encrypted_content`: when the client asks for it (`include:
 * ["reasoning.encrypted_content"]`, as Codex does with `store: false`), and whenever the response is stored, so that
 * `previous_response_id` replays it (and a client sending stored items back brings it too).
 */
export function encryptsThinking(include: readonly string[] | null | undefined, stored: boolean): boolean {
  return stored || (Array.isArray(include) && include.includes('reasoning.encrypted_content'));
}

/** Stream fragments of `thinking_blocks` joined per `index`, in order of first appearance. */
export interface ThinkingFragments {
  add(fragment: unknown): void;
  /** The complete blocks so far. */
  blocks(): ThinkingBlock[];
}

export function createThinkingFragments(): ThinkingFragments {
  const entries: Array<Record<string, unknown>> = [];
  const byIndex = new Map<number, Record<string, unknown>>();
  return {
    add(fragment) {
      if (!fragment || typeof fragment !== 'object') return;
      const { index, ...piece } = fragment as Record<string, unknown>;
      const open = typeof index === 'number' ? byIndex.get(index) : undefined;
      if (!open) {
        const entry = { ...piece };
        entries.push(entry);
        if (typeof index === 'number') byIndex.set(index, entry);
        return;
      }
      for (const field of ['thinking', 'signature', 'data'] as const) {
        const value = piece[field];
        if (typeof value !== 'string') continue;
        open[field] = typeof open[field] === 'string' ? open[field] + value : value;
      }
    },
    blocks: () => completeThinkingBlocks(entries),
  };
}
