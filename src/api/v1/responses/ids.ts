import { randomUUID } from 'node:crypto';

/**
 * Ids the gateway gives responses and their items, in OpenAI's shapes: `resp_`, `msg_`, `fc_`, `rs_`, … followed by
 * hex. A response id (32 hex digits) and an item id (32) start with their creation time in milliseconds (12 hex
 * digits), like request ids, so the stored responses' indexes (the primary key, and items by account and id) grow at
 * their end instead of touching a random page per item in every write and checkpoint; the 20 digits after it are
 * random (80 bits). An item id is no capability: `item_reference`s are looked up within the account. The randomness
 * comes from randomUUID, which draws from a cached pool of random bytes instead of a system call per id.
 */

export type ItemIdPrefix = 'msg' | 'fc' | 'fco' | 'rs' | 'item';

/** 12 hex digits of milliseconds, then 20 random ones (a UUID's last 12 and first 8: no fixed digit among them). */
function timeOrdered(now: number): string {
  const uuid = randomUUID();
  return `${Math.max(0, Math.floor(now)).toString(16).padStart(12, '0')}${uuid.slice(24)}${uuid.slice(0, 8)}`;
}

export function newResponseId(now: number = Date.now()): string {
  return `resp_${timeOrdered(now)}`;
}

export function newItemId(prefix: ItemIdPrefix, now: number = Date.now()): string {
  return `${prefix}_${timeOrdered(now)}`;
}

const gatewayIdPattern = /^([a-z]+)_([0-9a-f]{12})/;

/** When the gateway named an id (`resp_`, `msg_`, `fc_`, … + 12 hex digits of milliseconds); undefined otherwise. */
export function idCreatedAt(id: string): number | undefined {
  const match = gatewayIdPattern.exec(id);
  return match ? Number.parseInt(match[2] as string, 16) : undefined;
}

/** When the gateway created a response, from its id (`resp_` + 12 hex digits of milliseconds); undefined otherwise. */
export function responseCreatedAt(id: string): number | undefined {
  return id.startsWith('resp_') ? idCreatedAt(id) : undefined;
}
