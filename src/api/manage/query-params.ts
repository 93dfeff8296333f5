import { z } from 'zod';
import type { RequestLogCursor } from '../../request-log/search.js';

/** Query-string values shared by several routes: times, cursors, limits (query strings are always text). */

/** An ISO 8601 time or milliseconds since the epoch. */
export const timeParam = z
  .string()
  .max(40)
  .transform((text, context) => {
    const value = /^\d{1,15}$/.test(text) ? Number(text) : Date.parse(text);
    if (!Number.isFinite(value)) {
      context.addIssue({ code: 'custom', message: 'expected an ISO 8601 time or milliseconds since the epoch' });
      return z.NEVER;
    }
    return value;
  })
  .describe('ISO 8601 time or milliseconds since the epoch');

export function encodeCursor(cursor: RequestLogCursor): string {
  return Buffer.from(`${cursor.createdAt}.${cursor.id}`).toString('base64url');
}

/** An opaque cursor from a previous page's nextCursor. */
export const cursorParam = z
  .string()
  .max(100)
  .transform((text, context): RequestLogCursor => {
    const match = /^(\d{1,15})\.(\d{1,15})$/.exec(Buffer.from(text, 'base64url').toString('utf8'));
    if (!match) {
      context.addIssue({ code: 'custom', message: 'not a cursor returned by this API' });
      return z.NEVER;
    }
    return { createdAt: Number(match[1]), id: Number(match[2]) };
  })
  .describe("the previous page's nextCursor");

export const limitParam = (maximum: number, fallback: number) =>
  z
    .string()
    .regex(/^\d{1,5}$/, 'expected a whole number')
    .transform(Number)
    .pipe(z.number().int().min(1).max(maximum))
    .optional()
    .transform((value) => value ?? fallback)
    .describe(`page size, 1-${maximum} (default ${fallback})`);
