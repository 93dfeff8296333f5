import { createResponseObject } from './response-object.js';
import type { ResponseObject, ResponsesRequest } from './types.js';

/**
 * The response object without its output, as the `responses.response` column keeps it. A response the gateway built
 * (every member of createResponseObject, in its order, nothing else) is stored as `[2, {members that differ from
 * the defaults}]`: most settings echo a default, and ~850 of a short stored response's ~2,900 bytes were settings.
 * Anything else (an upstream's own object, relayed natively) is stored whole as a JSON object, which is also how
 * every row written before version 2 reads. Expanding restores the members in their order, so the object read back
 * is the same, byte for byte once serialized, as the one answered.
 */

type Settings = Omit<ResponseObject, 'output'>;

const compactVersion = 2;

/** The defaults: what a request that sets nothing echoes, finished. Fresh objects each call (they are handed out). */
function defaults(): Record<string, unknown> {
  const { output: _output, ...settings } = createResponseObject({ model: '' } as ResponsesRequest, {
    id: '',
    createdAt: 0,
    model: '',
  });
  return { ...settings, status: 'completed' };
}

const defaultValues = defaults();
const memberOrder = Object.keys(defaultValues);

/**
 * Whether two JSON values serialize the same (members in the same order). Walked rather than compared as JSON text:
 * serializing every object-valued setting of every stored response cost ~2 µs a response.
 */
function sameJson(value: unknown, other: unknown): boolean {
  if (value === other) return true;
  if (value === null || other === null || typeof value !== 'object' || typeof other !== 'object') return false;
  if (Array.isArray(value) !== Array.isArray(other)) return false;
  const names = Object.keys(value);
  const otherNames = Object.keys(other);
  if (names.length !== otherNames.length) return false;
  for (let index = 0; index < names.length; index++) {
    const name = names[index] as string;
    if (name !== otherNames[index]) return false;
    const member = (value as Record<string, unknown>)[name];
    // An undefined member (which JSON leaves out) counts as a difference: stored as given, it reads back the same.
    if (member === undefined || !sameJson(member, (other as Record<string, unknown>)[name])) return false;
  }
  return true;
}

function isDefault(name: string, value: unknown): boolean {
  return sameJson(value, defaultValues[name]);
}

/** The column's text for these settings: compact when the object has the gateway's shape, whole otherwise. */
export function storedSettingsJson(settings: Settings, wholeJson: string): string {
  const names = Object.keys(settings);
  if (names.length !== memberOrder.length || names.some((name, index) => name !== memberOrder[index])) return wholeJson;
  const differing: Record<string, unknown> = {};
  for (const name of names) {
    const value = (settings as Record<string, unknown>)[name];
    if (!isDefault(name, value)) differing[name] = value;
  }
  return `[${compactVersion},${JSON.stringify(differing)}]`;
}

/** The settings a column's text holds, in either form. */
export function readStoredSettings(text: string): Settings {
  const parsed = JSON.parse(text) as unknown;
  if (!Array.isArray(parsed)) return parsed as Settings;
  const [version, differing] = parsed as [unknown, Record<string, unknown>];
  if (version !== compactVersion) throw new Error(`stored response settings of unknown version ${String(version)}`);
  const settings = defaults();
  const result: Record<string, unknown> = {};
  for (const name of memberOrder) result[name] = name in differing ? differing[name] : settings[name];
  return result as Settings;
}
