import { randomUUID } from 'node:crypto';

/**
 * Ids the gateway gives responses and their items, in OpenAI's shapes: `resp_`, `msg_`, `fc_`, `rs_`, … followed by
 * hex. A response id starts with its creation time in milliseconds (12 hex digits), like request ids, so the stored
 * responses' primary-key index grows at its end; the 20 digits after it are random (80 bits), and item ids are
 * random throughout (32 hex digits, 122 random bits), since they are looked up by clients' `item_reference`s. The randomness comes from
 * randomUUID, which draws from a cached pool instead of a system call per id (docs/performance.md).
 */

export type ItemIdPrefix = 'msg' | 'fc' | 'fco' | 'rs' | 'item';

/** 30 random hex digits: a version 4 UUID without its dashes and its two fixed digits (version and variant). */
function randomHex(): string {
  const uuid = randomUUID();
  return uuid.slice(0, 8) + uuid.slice(9, 13) + uuid.slice(15, 18) + uuid.slice(20, 23) + uuid.slice(24);
}

export function newResponseId(now: number = Date.now()): string {
  return `resp_${Math.max(0, Math.floor(now)).toString(16).padStart(12, '0')}${randomHex().slice(0, 20)}`;
}

export function newItemId(prefix: ItemIdPrefix): string {
  return `${prefix}_${randomUUID().replaceAll('-', '')}`;
}
