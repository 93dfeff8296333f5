import type { ApiKeyView } from './types.js';

/**
 * How a key is named on screen. Names are not unique: a rotated key and its successor share one, and an account may
 * reuse a name. Where a name is shared by keys of the same account, the label adds the key's display suffix
 * ("checkout-service …wqnF"), so usage legends, totals and the log's key column tell the keys apart.
 */

export type KeyLabeller = (keyId: string | null, keyName: string | null) => string;

/** The suffix of a key's display form ("sk-sb-…wqnF" → "…wqnF"). */
export const displaySuffix = (display: string) => {
  const ellipsis = display.lastIndexOf('…');
  return ellipsis >= 0 ? display.slice(ellipsis) : `…${display.slice(-4)}`;
};

export function keyLabeller(keys: readonly ApiKeyView[]): KeyLabeller {
  const namesInUse = new Map<string, number>();
  for (const key of keys) {
    const scoped = `${key.accountId}\u0000${key.name}`;
    namesInUse.set(scoped, (namesInUse.get(scoped) ?? 0) + 1);
  }
  const byId = new Map(keys.map((key) => [key.id, key]));
  return (keyId, keyName) => {
    const key = keyId === null ? undefined : byId.get(keyId);
    const name = key?.name ?? keyName ?? keyId ?? '–';
    if (!key || (namesInUse.get(`${key.accountId}\u0000${key.name}`) ?? 0) < 2) return name;
    return `${name} ${displaySuffix(key.display)}`;
  };
}
