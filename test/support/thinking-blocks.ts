/**
 * `thinking_blocks` put back together from stream deltas, as a client does before sending them back with the tool calls
 * (LiteLLM's stream builder works alike): `thinking` pieces join until the piece that carries the block's signature;
 * a `redacted_thinking` piece is a whole block.
 */

export type ThinkingBlockOut =
  | { type: 'thinking'; thinking: string; signature?: string }
  | { type: 'redacted_thinking'; data: string };

export function joinThinkingBlocks(deltas: ReadonlyArray<Record<string, unknown> | undefined>): ThinkingBlockOut[] {
  const blocks: ThinkingBlockOut[] = [];
  let open: { type: 'thinking'; thinking: string; signature?: string } | undefined;
  for (const delta of deltas) {
    for (const piece of (delta?.thinking_blocks ?? []) as ThinkingBlockOut[]) {
      if (piece.type === 'redacted_thinking') {
        blocks.push({ type: 'redacted_thinking', data: piece.data });
        continue;
      }
      if (!open) {
        open = { type: 'thinking', thinking: '' };
        blocks.push(open);
      }
      open.thinking += piece.thinking;
      if (typeof piece.signature === 'string') {
        open.signature = piece.signature;
        open = undefined;
      }
    }
  }
  return blocks;
}
