/**
 * Per stream, each choice finishes once. An upstream that repeats its finish chunk (a duplicated event) would show the
 * client the end of an answer twice; the repeat's finish reason is cleared. Chat and legacy completion chunks alike.
 * Returns a function that fixes a chunk in place and reports whether it changed anything.
 */
export function createFinishKeeper(): (chunk: { choices: ReadonlyArray<unknown> }) => boolean {
  const finished = new Set<unknown>();
  return (chunk) => {
    let changed = false;
    for (const choice of chunk.choices as Array<{ index?: unknown; finish_reason?: unknown }>) {
      if (!choice.finish_reason) continue;
      if (finished.has(choice.index)) {
        choice.finish_reason = null;
        changed = true;
      } else {
        finished.add(choice.index);
      }
    }
    return changed;
  };
}
