/**
 * `${NAME}` interpolation for secrets in the YAML file. Runs on parsed string values (never on raw YAML text), so a
 * secret containing YAML syntax cannot change the document's structure.
 *
 * Forms: `${NAME}` (must be set), `${NAME:-fallback}` (fallback when unset or empty), `$${NAME}` (a literal `${NAME}`).
 */

/** A value that cannot be interpolated: an unset variable, or a YAML alias that contains itself. */
export class InterpolationError extends Error {
  constructor(
    readonly path: string,
    message: string,
  ) {
    super(message);
  }
}

const reference = /\$(\$?)\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

/**
 * With `unset`, an unset variable is recorded there and its reference left as written, so that the rest of the file
 * is still checked and every bad field is named at once; without it, the first one throws.
 */
export function interpolateString(
  text: string,
  env: NodeJS.ProcessEnv,
  path: string,
  unset?: InterpolationError[],
): string {
  return text.replace(reference, (whole, escaped: string, name: string, fallback: string | undefined) => {
    if (escaped) return whole.slice(1);
    const value = env[name];
    if (value !== undefined && value !== '') return value;
    if (fallback !== undefined) return fallback;
    const problem = new InterpolationError(path, `environment variable ${name} is not set`);
    if (!unset) throw problem;
    unset.push(problem);
    return whole;
  });
}

/**
 * Returns a copy of `value` with every string interpolated; errors name the path of the offending field. Unset
 * variables go to `unset` when given (see interpolateString). `enclosing` holds the objects being copied: YAML parses
 * `a: &x [*x]` into an object that contains itself, which would otherwise recurse until the stack overflows.
 */
export function interpolate(
  value: unknown,
  env: NodeJS.ProcessEnv,
  path = '',
  enclosing: ReadonlySet<object> = new Set(),
  unset?: InterpolationError[],
): unknown {
  if (typeof value === 'string') return interpolateString(value, env, path, unset);
  if (value === null || typeof value !== 'object') return value;
  if (enclosing.has(value)) throw new InterpolationError(path, 'a YAML alias (*name) that refers to its own anchor');
  const inside = new Set(enclosing).add(value);
  if (Array.isArray(value)) {
    return value.map((item, index) => interpolate(item, env, `${path}[${index}]`, inside, unset));
  }
  const result: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    result[key] = interpolate(item, env, path ? `${path}.${key}` : key, inside, unset);
  }
  return result;
}
