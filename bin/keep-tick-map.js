// Keeps one of process.nextTick's tick objects alive for the life of the process, so that V8 keeps the hidden class
// ("map") every tick object gets.
//
// Why: nextTick builds each tick object from a literal with computed keys ({ [async_id_symbol]: id, ... }). V8 records,
// for each computed key, the map the object had when the key was added, and holds that map weakly. If a full garbage
// collection runs while no tick object is alive (start-up loads our whole bundle and collects several times), the maps
// die, the next nextTick finds its recorded map gone, and the site is marked megamorphic for good: from then on every
// nextTick (several per request, from inside node:stream and node:http) adds its properties through the runtime's slow
// path (what that costs: docs/performance.md, "Process-level workarounds"). A bare node:http proxy collects nothing at
// start-up and never hit it.
//
// The object is caught with an async hook enabled for one nextTick call only (init hooks receive the tick object);
// nothing else is observed, and with the hook disabled nextTick runs as before.
import { createHook } from 'node:async_hooks';

let kept;

/** Returns the tick object kept (the same one on every call), or undefined if this Node reports none. */
export function keepTickObjectMap() {
  if (kept !== undefined) return kept;
  const hook = createHook({
    init(_asyncId, type, _triggerAsyncId, resource) {
      if (type === 'TickObject' && kept === undefined) kept = resource;
    },
  }).enable();
  try {
    process.nextTick(() => {});
  } finally {
    hook.disable();
  }
  return kept;
}
