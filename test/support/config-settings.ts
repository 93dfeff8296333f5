import type { z } from 'zod';

/**
 * Every setting of the configuration file, read from the zod schema itself (not from a list kept by hand), so a test
 * can hold docs/configuration.md to it: a new setting without a row, or a row for a setting that is gone, fails.
 */

export interface SettingNode {
  /** The file's spelling: `server.port`, `providers[].timeouts.connect`, `models[].deployments[].weight`. */
  path: string;
  /** For a setting of one provider type only (`providers[]` is a union on `type`): that type. */
  variant?: string;
  /** A value the operator writes (not an object or a list of objects the walk went into). */
  leaf: boolean;
  /** The setting may be left out (it has a default, or it is optional). */
  optional: boolean;
  /** The setting's schema below its `.default()`: what a value written in the file is parsed with. */
  schema: z.ZodType;
  /** With a static default: the value the schema gives when the setting is left out. */
  defaultValue?: unknown;
  hasDefault: boolean;
}

interface Definition {
  type: string;
  innerType?: z.ZodType;
  defaultValue?: unknown;
  in?: z.ZodType;
  out?: z.ZodType;
  shape?: Record<string, z.ZodType>;
  element?: z.ZodType;
  options?: z.ZodType[];
}

const definitionOf = (schema: z.ZodType): Definition => (schema as unknown as { _zod: { def: Definition } })._zod.def;

/** The schema below optional, nullable, default and transform wrappers: the shape a value has. */
function coreOf(schema: z.ZodType): z.ZodType {
  const definition = definitionOf(schema);
  if (['optional', 'nullable', 'default'].includes(definition.type)) return coreOf(definition.innerType as z.ZodType);
  if (definition.type === 'pipe') {
    const input = definition.in as z.ZodType;
    // `z.preprocess(f, schema)` is a pipe from a transform; `schema.transform(f)` is a pipe into one.
    if (definitionOf(input).type === 'transform') return coreOf(definition.out as z.ZodType);
    const inner = coreOf(input);
    return definitionOf(inner).type === 'object' ? inner : schema;
  }
  return schema;
}

/** An object, or a union of objects (the providers, one schema per type). */
function isObject(schema: z.ZodType): boolean {
  const definition = definitionOf(coreOf(schema));
  if (definition.type === 'union') return (definition.options ?? []).every((option) => isObject(option));
  return definition.type === 'object';
}

/** The `type` literal of one option of the providers' union. */
function variantOf(option: z.ZodType): string | undefined {
  const typeField = definitionOf(coreOf(option)).shape?.type;
  const values = typeField ? (definitionOf(typeField) as { values?: unknown[] }).values : undefined;
  return typeof values?.[0] === 'string' ? values[0] : undefined;
}

function walk(schema: z.ZodType, path: string, variant: string | undefined, nodes: SettingNode[]): void {
  let field = schema;
  let optional = false;
  let hasDefault = false;
  for (;;) {
    const type = definitionOf(field).type;
    if (type === 'default') {
      hasDefault = true;
      optional = true;
    } else if (type === 'optional' || type === 'nullable') {
      optional = true;
    } else if (type === 'pipe' && definitionOf(definitionOf(field).in as z.ZodType).type === 'transform') {
      // A preprocess (e.g. '' read as "not set") in front of the real schema.
    } else {
      break;
    }
    const definition = definitionOf(field);
    field = (definition.innerType ?? definition.out) as z.ZodType;
  }
  const core = coreOf(field);
  const definition = definitionOf(core);
  const element = definition.type === 'array' ? (definition.element as z.ZodType) : undefined;
  const leaf = !isObject(core) && !(element && isObject(element));
  if (path !== '') {
    nodes.push({
      path,
      ...(variant === undefined ? {} : { variant }),
      leaf,
      optional,
      schema: field,
      hasDefault,
      ...(hasDefault ? { defaultValue: schema.parse(undefined) } : {}),
    });
  }
  if (leaf) return;
  if (definition.type === 'object') {
    for (const [key, child] of Object.entries(definition.shape ?? {})) {
      walk(child, path === '' ? key : `${path}.${key}`, variant, nodes);
    }
  } else if (element) {
    walk(element, `${path}[]`, variant, nodes);
  } else {
    for (const option of definition.options ?? []) walk(option, path, variant ?? variantOf(option), nodes);
  }
}

/** Every setting the schema accepts, objects and lists of objects included; leaves are what the operator writes. */
export function settingsOf(schema: z.ZodType): SettingNode[] {
  const nodes: SettingNode[] = [];
  walk(schema, '', undefined, nodes);
  return nodes;
}
