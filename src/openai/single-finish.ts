/**
 * Per stream, each choice finishes once. An upstream that repeats its finish chunk (a duplicated event) would show the
 * client the end of an answer twice; the repeat's finish reason is cleared. Chat and legacy completion chunks alike.
 * Calling it fixes a chunk in place and reports whether it changed anything; `unfinished` names the choices seen that
 * never finished.
 */
export interface FinishKeeper {
  (chunk: { choices: ReadonlyArray<unknown> }): boolean;
  /** The indexes of the choices seen so far without a finish reason, in the order they first came. */
  unfinished(): unknown[];
}

export function createFinishKeeper(): FinishKeeper {
  const finished = new Set<unknown>();
  const seen = new Set<unknown>();
  // Most streams carry one choice: the set is touched only when the index changes (the relay loops are ~100 ns a chunk).
  let lastSeen: unknown = Symbol('none');
  const keep = (chunk: { choices: ReadonlyArray<unknown> }) => {
    let changed = false;
    for (const choice of chunk.choices as Array<{ index?: unknown; finish_reason?: unknown }>) {
      if (choice.index !== lastSeen) {
        lastSeen = choice.index;
        seen.add(lastSeen);
      }
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
  return Object.assign(keep, { unfinished: () => [...seen].filter((index) => !finished.has(index)) });
}
