/**
 * `${NAME}` interpolation for secrets in the YAML file. Runs on parsed string values (never on raw YAML text), so a
 * secret containing YAML syntax cannot change the document's structure.
 *
 * Forms: `${NAME}` (must be set), `${NAME:-fallback}` (fallback when unset or empty), `$${NAME}` (a literal `${NAME}`).
 */

export class InterpolationError extends Error {
  constructor(
    readonly path: string,
    readonly variable: string,
  ) {
    super(`environment variable ${variable} is not set`);
  }
}

const reference = /\$(\$?)\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

export function interpolateString(text: string, env: NodeJS.ProcessEnv, path: string): string {
  return text.replace(reference, (whole, escaped: string, name: string, fallback: string | undefined) => {
    if (escaped) return whole.slice(1);
    const value = env[name];
    if (value !== undefined && value !== '') return value;
    if (fallback !== undefined) return fallback;
    throw new InterpolationError(path, name);
  });
}

/** Returns a copy of `value` with every string interpolated; errors name the path of the offending field. */
export function interpolate(value: unknown, env: NodeJS.ProcessEnv, path = ''): unknown {
  if (typeof value === 'string') return interpolateString(value, env, path);
  if (Array.isArray(value)) return value.map((item, index) => interpolate(item, env, `${path}[${index}]`));
  if (value !== null && typeof value === 'object') {
    const result: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      result[key] = interpolate(item, env, path ? `${path}.${key}` : key);
    }
    return result;
  }
  return value;
}
