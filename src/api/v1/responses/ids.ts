import { randomBytes } from 'node:crypto';

/**
 * Ids the gateway gives responses and their items, in OpenAI's shapes: `resp_`, `msg_`, `fc_`, `rs_`, … followed by
 * hex. A response id starts with its creation time in milliseconds (12 hex digits), like request ids, so the stored
 * responses' primary-key index grows at its end; the 20 digits after it are random (80 bits), and item ids are
 * random throughout (128 bits), since they are looked up by clients' `item_reference`s.
 */

export type ItemIdPrefix = 'msg' | 'fc' | 'fco' | 'rs' | 'item';

export function newResponseId(now: number = Date.now()): string {
  return `resp_${Math.max(0, Math.floor(now)).toString(16).padStart(12, '0')}${randomBytes(10).toString('hex')}`;
}

export function newItemId(prefix: ItemIdPrefix): string {
  return `${prefix}_${randomBytes(16).toString('hex')}`;
}
