/**
 * One value of a JSON document replaced, deleted or given an unknown sibling: what the generated tests build their
 * "nearly right" documents from (a client's request in bad-input.endpoints.test.ts, an upstream's answer in
 * hostile-upstream.generated.test.ts), so that a fault lands deep inside a valid shape instead of at its door.
 */

export type Mutation = { kind: 'none' | 'replace' | 'delete' | 'add'; at: number; value: unknown };

/** Every path to a value in a JSON document (the root excluded). */
export function pathsOf(
  value: unknown,
  prefix: (string | number)[] = [],
  into: (string | number)[][] = [],
): (string | number)[][] {
  if (Array.isArray(value)) {
    value.forEach((element, index) => {
      into.push([...prefix, index]);
      pathsOf(element, [...prefix, index], into);
    });
  } else if (value !== null && typeof value === 'object') {
    for (const [key, element] of Object.entries(value)) {
      into.push([...prefix, key]);
      pathsOf(element, [...prefix, key], into);
    }
  }
  return into;
}

/** The document with one value replaced, deleted or given an unknown sibling: a document that is nearly right. */
export function mutate<Document>(document: Document, mutation: Mutation): Document {
  const copy = structuredClone(document);
  const paths = pathsOf(copy);
  if (mutation.kind === 'none' || paths.length === 0) return copy;
  const path = paths[mutation.at % paths.length] as (string | number)[];
  // biome-ignore lint/suspicious/noExplicitAny: walking an arbitrary JSON document
  let parent: any = copy;
  for (const step of path.slice(0, -1)) parent = parent[step];
  const last = path[path.length - 1] as string | number;
  if (mutation.kind === 'replace') parent[last] = mutation.value;
  else if (mutation.kind === 'delete') {
    if (Array.isArray(parent)) parent.splice(last as number, 1);
    else delete parent[last];
  } else if (Array.isArray(parent)) parent.push(mutation.value);
  else parent[`${String(last)}_extra`] = mutation.value;
  return copy;
}
