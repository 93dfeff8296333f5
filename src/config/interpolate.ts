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

export function interpolateString(text: string, env: NodeJS.ProcessEnv, path: string): string {
  return text.replace(reference, (whole, escaped: string, name: string, fallback: string | undefined) => {
    if (escaped) return whole.slice(1);
    const value = env[name];
    if (value !== undefined && value !== '') return value;
    if (fallback !== undefined) return fallback;
    throw new InterpolationError(path, `environment variable ${name} is not set`);
  });
}

/**
 * Returns a copy of `value` with every string interpolated; errors name the path of the offending field. `enclosing`
 * holds the objects being copied: YAML parses `a: &x [*x]` into an object that contains itself, which would otherwise
 * recurse until the stack overflows.
 */
export function interpolate(
  value: unknown,
  env: NodeJS.ProcessEnv,
  path = '',
  enclosing: ReadonlySet<object> = new Set(),
): unknown {
  if (typeof value === 'string') return interpolateString(value, env, path);
  if (value === null || typeof value !== 'object') return value;
  if (enclosing.has(value)) throw new InterpolationError(path, 'a YAML alias (*name) that refers to its own anchor');
  const inside = new Set(enclosing).add(value);
  if (Array.isArray(value)) return value.map((item, index) => interpolate(item, env, `${path}[${index}]`, inside));
  const result: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    result[key] = interpolate(item, env, path ? `${path}.${key}` : key, inside);
  }
  return result;
}
