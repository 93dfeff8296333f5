import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

// bin/keep-tick-map.js keeps one nextTick tick object alive so that full collections (start-up's, and the quiet-time
// reclaim's) cannot take away the hidden class every tick object gets; if they do, nextTick's object literal falls to
// V8's slow path for the rest of the process. The check needs V8's natives syntax (%HaveSameMap), so it runs in a child
// Node started with --allow-natives-syntax: a tick object made after full collections must still share the kept one's
// map.

const module = fileURLToPath(new URL('../../bin/keep-tick-map.js', import.meta.url));
const directory = mkdtempSync(path.join(tmpdir(), 'switchboard-tick-map-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

const probe = `
import { createHook } from 'node:async_hooks';
const { keepTickObjectMap } = await import(process.argv[2]);
const kept = keepTickObjectMap();
const drain = () => new Promise((resolve) => setImmediate(resolve));
for (let round = 0; round < 3; round++) {
  for (let count = 0; count < 100; count++) process.nextTick(() => {});
  await drain();
  globalThis.gc();
}
let later;
const hook = createHook({
  init(_id, type, _trigger, resource) {
    if (type === 'TickObject') later ??= resource;
  },
}).enable();
process.nextTick(() => {});
hook.disable();
process.stdout.write(JSON.stringify({
  keys: Object.getOwnPropertySymbols(kept).map(String),
  callback: typeof kept.callback,
  sameMap: %HaveSameMap(kept, later),
  again: keepTickObjectMap() === kept,
}));
`;

describe('keeping nextTick’s tick-object map alive', () => {
  it('keeps a real tick object, the same one on every call, whose map later tick objects still share after full collections', () => {
    const script = path.join(directory, 'probe.mjs');
    writeFileSync(script, probe);
    const output = execFileSync(process.execPath, ['--allow-natives-syntax', '--expose-gc', script, module], {
      encoding: 'utf8',
    });
    expect(JSON.parse(output)).toEqual({
      keys: ['Symbol(async_id_symbol)', 'Symbol(trigger_async_id_symbol)'],
      callback: 'function',
      sameMap: true,
      again: true,
    });
  });
});
