import { readdirSync } from 'node:fs';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { configSchema } from '../../src/config/schema.js';
import { type SettingNode, settingsOf } from '../support/config-settings.js';
import { codeSpans, readDoc, repositoryRoot, type Table, tablesOf } from '../support/markdown.js';

/**
 * docs/configuration.md against the schema (src/config/): every setting has a row, every row is a setting, and a
 * default the page states as a value is the schema's default. The settings come from the schema itself.
 */

const settings = settingsOf(configSchema);
const settingsPage = readDoc('docs/configuration.md');

/** One table of the "Settings" part of the page, with the settings it documents. */
interface SettingsTable {
  table: Table;
  /** The path its keys are relative to: `server`, `providers[]`, `models[].deployments[]`. */
  prefix: string;
  /** Set under a heading like "Local providers (`type: local`)": the provider type its rows are for. */
  variant?: string;
}

function settingsTables(): SettingsTable[] {
  const result: SettingsTable[] = [];
  for (const table of tablesOf(settingsPage)) {
    const settingsHeading = table.headings.findIndex((heading) => heading.text === 'Settings');
    if (settingsHeading < 0) continue;
    let prefix = '';
    let variant: string | undefined;
    for (const heading of table.headings.slice(settingsHeading + 1)) {
      const span = codeSpans(heading.text)[0];
      if (span === undefined) continue;
      const typeSpan = /^type: (\w+)$/.exec(span);
      if (typeSpan) variant = typeSpan[1];
      else prefix = span;
    }
    result.push({ table, prefix, ...(variant === undefined ? {} : { variant }) });
  }
  return result;
}

const tables = settingsTables();

/** The provider types a table speaks for: its own, or those no table of the same prefix claims. */
function variantsCovered(entry: SettingsTable): ReadonlySet<string | undefined> {
  if (entry.variant !== undefined) return new Set([entry.variant]);
  const claimed = new Set(tables.filter((other) => other.prefix === entry.prefix).map((other) => other.variant));
  return new Set(
    settings.map((node) => node.variant).filter((variant) => variant === undefined || !claimed.has(variant)),
  );
}

/** The settings a key cell names (`pricing.input` / `pricing.output` is two), as full paths. */
function keysOf(entry: SettingsTable, cells: string[]): string[] {
  return codeSpans(cells[0] ?? '').map((key) => (entry.prefix === '' ? key : `${entry.prefix}.${key}`));
}

function nodesAt(path: string, variants: ReadonlySet<string | undefined>): SettingNode[] {
  return settings.filter((node) => node.path === path && variants.has(node.variant));
}

/** Words inside the code spans of a piece of Markdown: `[{key_identifier, key}]` names both. */
function codeWords(markdown: string): Set<string> {
  return new Set(codeSpans(markdown).flatMap((span) => span.split(/[^\w]+/).filter(Boolean)));
}

/** Whether the page names a setting: its own row, or a row of a setting it belongs to plus its name in that table. */
function isDocumented(node: SettingNode): boolean {
  const lastName = node.path.replace(/\[\]$/, '').split('.').pop() as string;
  return tables.some((entry) => {
    if (!variantsCovered(entry).has(node.variant)) return false;
    const tableWords = codeWords(entry.table.rows.map((row) => row.cells.join(' ')).join(' '));
    return entry.table.rows.some((row) =>
      keysOf(entry, row.cells).some((key) => {
        const written = key.replace(/\[\]$/, '');
        if (written === node.path.replace(/\[\]$/, '')) return true;
        const below = node.path.startsWith(`${written}.`) || node.path.startsWith(`${written}[].`);
        return below && tableWords.has(lastName);
      }),
    );
  });
}

/**
 * Defaults worked out from other settings rather than written in the schema, with where the parsed configuration
 * keeps them: the page states them as plain values, which are checked against the schema's real outcome.
 */
const computedDefaults: Record<string, () => unknown> = {
  'request_log.rollup_retention': () => configSchema.parse({}).requestLog.rollupRetentionMs,
};

/** The value a default cell states, when it is one code span and nothing else (`30s`, `[]`, `auto`). */
function statedDefault(cell: string): string | undefined {
  const match = /^`([^`]+)`$/.exec(cell.trim());
  return match?.[1];
}

/** Whether a value written as the page writes it is, once parsed like the file's, the expected value. */
function meansValue(schema: SettingNode['schema'], written: string, expected: unknown): boolean {
  const candidates: unknown[] = [written];
  try {
    candidates.push(parseYaml(written));
  } catch {
    // Not YAML: only the text itself can be meant.
  }
  return candidates.some((candidate) => {
    const parsed = schema.safeParse(candidate);
    return parsed.success && isDeepStrictEqual(parsed.data, expected);
  });
}

describe('docs/configuration.md and the configuration schema', () => {
  it('finds the settings tables and the settings of the schema', () => {
    expect(tables.map((entry) => entry.prefix)).toEqual(
      expect.arrayContaining(['server', 'database', 'providers[]', 'models[]', 'models[].deployments[]']),
    );
    expect(tables.some((entry) => entry.variant === 'local')).toBe(true);
    const paths = settings.filter((node) => node.leaf).map((node) => node.path);
    expect(paths).toEqual(expect.arrayContaining(['server.port', 'providers[].timeouts.connect', 'models[].name']));
  });

  it('documents every setting of the schema', () => {
    const missing = settings
      .filter((node) => node.leaf && !isDocumented(node))
      .map((node) => (node.variant === undefined ? node.path : `${node.path} (type: ${node.variant})`));
    expect([...new Set(missing)]).toEqual([]);
  });

  it('documents only settings that exist', () => {
    const unknown: string[] = [];
    for (const entry of tables) {
      for (const row of entry.table.rows) {
        for (const key of keysOf(entry, row.cells)) {
          if (nodesAt(key, variantsCovered(entry)).length === 0) unknown.push(`${key} (line ${row.line})`);
        }
      }
    }
    expect(unknown).toEqual([]);
  });

  it('states the real default wherever it states one as a value', () => {
    const wrong: string[] = [];
    for (const entry of tables) {
      const defaultColumn = entry.table.header.indexOf('Default');
      if (defaultColumn < 0) continue;
      for (const row of entry.table.rows) {
        const cell = row.cells[defaultColumn] ?? '';
        const stated = statedDefault(cell);
        for (const key of keysOf(entry, row.cells)) {
          const nodes = nodesAt(key, variantsCovered(entry));
          for (const node of nodes) {
            const where = `${key}${node.variant ? ` (type: ${node.variant})` : ''}, line ${row.line}`;
            if (cell === 'required' && node.optional) wrong.push(`${where}: documented as required, but optional`);
            if (stated === undefined) continue;
            const computed = computedDefaults[key];
            if (node.hasDefault || computed) {
              const expected = node.hasDefault ? node.defaultValue : computed?.();
              if (!meansValue(node.schema, stated, expected)) {
                wrong.push(`${where}: documented default ${stated}, real default ${JSON.stringify(expected)}`);
              }
            } else {
              // No default of its own: the cell may name the setting it falls back to (`input`, `routing.retry`).
              const parent = key.slice(0, Math.max(0, key.lastIndexOf('.')));
              const sibling = parent === '' ? stated : `${parent}.${stated}`;
              if (!settings.some((other) => other.path === sibling || other.path === stated)) {
                wrong.push(`${where}: documented default ${stated}, but the schema has none`);
              }
            }
          }
        }
      }
    }
    expect(wrong).toEqual([]);
  });
});

/**
 * switchboard.example.yaml says it has every setting with its default. Settings it shows commented out (`# port: 9464`)
 * count: they are read with their `#` taken off.
 */
describe('switchboard.example.yaml and the configuration schema', () => {
  const exampleText = readDoc('switchboard.example.yaml').replace(/^(\s*)# ([a-z_]+:)/gm, '$1$2');
  // A commented-out alternative repeats a key shown above it (`public_keys: []`, then an example entry): the last wins.
  const example = parseYaml(exampleText, { uniqueKeys: false }) as Record<string, unknown>;

  /** Every path the file writes (`providers[].timeouts.idle`), with the values written there. */
  function writtenPaths(value: unknown, path: string, found: Map<string, unknown[]>): void {
    if (Array.isArray(value) && value.some((item) => item !== null && typeof item === 'object')) {
      for (const item of value) writtenPaths(item, `${path}[]`, found);
      return;
    }
    if (path !== '') found.set(path, [...(found.get(path) ?? []), value]);
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
      for (const [key, child] of Object.entries(value))
        writtenPaths(child, path === '' ? key : `${path}.${key}`, found);
    }
  }
  const written = new Map<string, unknown[]>();
  writtenPaths(example, '', written);

  it('shows every setting', () => {
    const missing = settings.filter((node) => node.leaf && !written.has(node.path)).map((node) => node.path);
    expect([...new Set(missing)]).toEqual([]);
  });

  it('shows each setting of a section at its default (provider and model entries are examples)', () => {
    const wrong: string[] = [];
    for (const node of settings) {
      if (!node.leaf || !node.hasDefault || node.path.includes('[]')) continue;
      for (const value of written.get(node.path) ?? []) {
        const parsed = node.schema.safeParse(value);
        if (!parsed.success || !isDeepStrictEqual(parsed.data, node.defaultValue)) {
          wrong.push(`${node.path}: ${JSON.stringify(value)}, default ${JSON.stringify(node.defaultValue)}`);
        }
      }
    }
    expect(wrong).toEqual([]);
  });
});

/** Settings named anywhere in README.md and docs/ (`server.v1_body_timeout`, `models[].pricing`) exist. */
describe('settings named across the documentation', () => {
  it('are settings of the schema', () => {
    // `request_log` and `responses` also name a table and an SDK object (`request_log.served_latency_ms`,
    // `responses.parse`): only the other sections' names are read as settings.
    const sections = settings
      .filter((node) => !node.path.includes('.'))
      .map((node) => node.path.replace(/\[\]$/, ''))
      .filter((section) => !['request_log', 'responses'].includes(section));
    const pattern = new RegExp(`^(${sections.join('|')})(\\[\\])?\\.[a-z_][a-z_.\\[\\]]*$`);
    const known = new Set(settings.map((node) => node.path.replace(/\[\]$/, '')));
    const unknown: string[] = [];
    for (const file of ['README.md', ...readdirSync(path.join(repositoryRoot, 'docs')).map((name) => `docs/${name}`)]) {
      if (!file.endsWith('.md')) continue;
      for (const span of codeSpans(readDoc(file))) {
        const isFileOrPrefix = /\.(ts|js|db|md)$|\.$/.test(span);
        if (pattern.test(span) && !isFileOrPrefix && !known.has(span.replace(/\[\]$/, ''))) {
          unknown.push(`${file}: ${span}`);
        }
      }
    }
    expect([...new Set(unknown)]).toEqual([]);
  });
});
