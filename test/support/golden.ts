/**
 * Comparing actual output with a golden transcript. Expected values may be placeholders for what legitimately changes
 * between runs: `{{number}}` (any number, e.g. `created`), `{{string}}`, and `{{match:REGEX}}` (a string matching
 * the regular expression, e.g. a minted tool-call id). Returns the differences, each with its JSON path.
 */
export function goldenDifferences(actual: unknown, expected: unknown, path = '$'): string[] {
  if (typeof expected === 'string' && expected.startsWith('{{') && expected.endsWith('}}')) {
    const placeholder = expected.slice(2, -2);
    if (placeholder === 'number')
      return typeof actual === 'number' ? [] : [`${path}: expected a number, got ${JSON.stringify(actual)}`];
    if (placeholder === 'string')
      return typeof actual === 'string' ? [] : [`${path}: expected a string, got ${JSON.stringify(actual)}`];
    if (placeholder.startsWith('match:')) {
      const pattern = new RegExp(placeholder.slice('match:'.length));
      return typeof actual === 'string' && pattern.test(actual)
        ? []
        : [`${path}: expected a string matching ${pattern}, got ${JSON.stringify(actual)}`];
    }
  }
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) return [`${path}: expected an array, got ${JSON.stringify(actual)}`];
    const differences: string[] = [];
    if (actual.length !== expected.length) {
      differences.push(`${path}: expected ${expected.length} items, got ${actual.length}: ${JSON.stringify(actual)}`);
    }
    for (let index = 0; index < Math.min(actual.length, expected.length); index++) {
      differences.push(...goldenDifferences(actual[index], expected[index], `${path}[${index}]`));
    }
    return differences;
  }
  if (expected !== null && typeof expected === 'object') {
    if (actual === null || typeof actual !== 'object' || Array.isArray(actual)) {
      return [`${path}: expected an object, got ${JSON.stringify(actual)}`];
    }
    const differences: string[] = [];
    const keys = new Set([...Object.keys(expected), ...Object.keys(actual)]);
    for (const key of keys) {
      if (!(key in expected))
        differences.push(`${path}.${key}: unexpected, got ${JSON.stringify((actual as Record<string, unknown>)[key])}`);
      else if (!(key in actual)) differences.push(`${path}.${key}: missing`);
      else {
        differences.push(
          ...goldenDifferences(
            (actual as Record<string, unknown>)[key],
            (expected as Record<string, unknown>)[key],
            `${path}.${key}`,
          ),
        );
      }
    }
    return differences;
  }
  return Object.is(actual, expected)
    ? []
    : [`${path}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`];
}
