import { randomUUID } from 'node:crypto';

/**
 * Ids the gateway gives responses and their items, in OpenAI's shapes: `resp_`, `msg_`, `fc_`, `rs_`, … followed by
 * hex. A response id (32 hex digits) and an item id (32) start with their creation time in milliseconds (12 hex
 * digits), like request ids, so the stored responses' indexes (the primary key, and items by account and id) grow at
 * their end instead of touching a random page per item in every write and checkpoint; the 20 digits after it are
 * random (80 bits). An item id is no capability: `item_reference`s are looked up within the account. The randomness
 * comes from randomUUID, which draws from a cached pool instead of a system call per id (docs/performance.md).
 */

export type ItemIdPrefix = 'msg' | 'fc' | 'fco' | 'rs' | 'item';

/** 30 random hex digits: a version 4 UUID without its dashes and its two fixed digits (version and variant). */
function randomHex(): string {
  const uuid = randomUUID();
  return uuid.slice(0, 8) + uuid.slice(9, 13) + uuid.slice(15, 18) + uuid.slice(20, 23) + uuid.slice(24);
}

function timeOrdered(now: number): string {
  return `${Math.max(0, Math.floor(now)).toString(16).padStart(12, '0')}${randomHex().slice(0, 20)}`;
}

export function newResponseId(now: number = Date.now()): string {
  return `resp_${timeOrdered(now)}`;
}

export function newItemId(prefix: ItemIdPrefix, now: number = Date.now()): string {
  return `${prefix}_${timeOrdered(now)}`;
}
