/**
 * `thinking_blocks` put back together from stream deltas, as a client does before sending them back with the tool calls:
 * fragments of one `index` are one block, their `thinking` (and `signature`) joined, as the openai Python SDK's stream
 * helper merges them.
 */

export type ThinkingBlockOut =
  | { type: 'thinking'; thinking: string; signature?: string }
  | { type: 'redacted_thinking'; data: string };

type Fragment = ThinkingBlockOut & { index: number; signature?: string };

export function joinThinkingBlocks(deltas: ReadonlyArray<Record<string, unknown> | undefined>): ThinkingBlockOut[] {
  const blocks: ThinkingBlockOut[] = [];
  for (const delta of deltas) {
    for (const { index, ...piece } of (delta?.thinking_blocks ?? []) as Fragment[]) {
      const block = blocks[index];
      if (!block) blocks[index] = piece;
      else if (block.type === 'thinking' && piece.type === 'thinking') {
        block.thinking += piece.thinking;
        if (piece.signature !== undefined) block.signature = (block.signature ?? '') + piece.signature;
      }
    }
  }
  return blocks;
}
