import { z } from 'zod';
import { parseDuration, parseSize } from './units.js';

/** Values that settings of every section take: durations, sizes and names, each with the error an operator reads. */

export const duration = z.union([z.string(), z.number()]).transform((value, context) => {
  const milliseconds = parseDuration(value);
  if (milliseconds === undefined) {
    context.addIssue({ code: 'custom', message: `"${value}" is not a duration (use e.g. 500ms, 30s, 5m, 24h, 30d)` });
    return z.NEVER;
  }
  return milliseconds;
});

/** Node fires a timer of more than 2^31-1 ms after 1 ms instead: a 30d interval would run back to back. */
export const maxTimerMs = 2_147_483_647;

/** A duration that is used as a timer's delay (an interval, a timeout), so at most ~24.8 days. */
export const timerDuration = duration.refine(
  (milliseconds) => milliseconds <= maxTimerMs,
  `must be at most 24d (${maxTimerMs} ms): longer timers do not fit Node's timers`,
);

export const size = z.union([z.string(), z.number()]).transform((value, context) => {
  const bytes = parseSize(value);
  if (bytes === undefined) {
    context.addIssue({ code: 'custom', message: `"${value}" is not a size (use e.g. 512kb, 16mb)` });
    return z.NEVER;
  }
  return bytes;
});

export const name = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[A-Za-z0-9][A-Za-z0-9._:/@-]*$/, 'use letters, digits and . _ : / @ - (starting with a letter or digit)');
