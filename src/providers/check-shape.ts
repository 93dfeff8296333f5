import type { z } from 'zod';
import { malformed } from './http.js';

/**
 * Checks an upstream answer against the shape its translation reads (a zod schema of just those fields, the rest left
 * open): anything else is the upstream's fault, a 502 upstream_malformed_response naming the first field at fault,
 * never a crash of the translation (a 500).
 */
export function checkShape(providerName: string, schema: z.ZodType, value: unknown, what: string): void {
  const result = schema.safeParse(value);
  if (result.success) return;
  const issue = result.error.issues[0];
  const field = issue && issue.path.length > 0 ? issue.path.map(String).join('.') : 'top level';
  throw malformed(providerName, `${what} whose ${field} is not what its API sends (${issue?.message ?? 'invalid'})`);
}
