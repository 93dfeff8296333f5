/**
 * Whether a statement failed on a unique constraint, on either engine: the row another request inserted between our
 * check and our insert. A check alone cannot stand in for the constraint (two requests both find no row, then both
 * insert), so services that answer "already exists" also map this error to it.
 */
export function isUniqueViolation(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const code = (error as { code?: unknown }).code;
  // PostgreSQL's unique_violation; better-sqlite3's codes for a UNIQUE column and a primary key.
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}
