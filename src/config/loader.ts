import { existsSync } from 'node:fs';
import path from 'node:path';
import { parseDocument } from 'yaml';
import type { z } from 'zod';
import { builtInConfig } from './defaults.js';
import { InterpolationError, interpolate } from './interpolate.js';
import { readConfigFile } from './read-config-file.js';
import { type Config, configSchema } from './schema.js';

/** A configuration that cannot be used; the message lists every problem with the path of its field. */
export class ConfigError extends Error {
  constructor(
    readonly source: string,
    readonly problems: string[],
  ) {
    super(`invalid configuration (${source}):\n${problems.map((problem) => `  - ${problem}`).join('\n')}`);
  }
}

/** Values given on the command line; they win over the file. */
export interface ConfigOverrides {
  host?: string | undefined;
  port?: number | undefined;
  dataDir?: string | undefined;
}

export interface LoadConfigOptions {
  /** Explicit file (--config). When absent: $SWITCHBOARD_CONFIG, then ./switchboard.yaml if it exists. */
  file?: string | undefined;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  overrides?: ConfigOverrides;
}

export interface LoadedConfig {
  config: Config;
  /** The file the configuration came from, or undefined for built-in defaults. */
  file: string | undefined;
}

export function resolveConfigFile(options: LoadConfigOptions): string | undefined {
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  const explicit = options.file ?? env.SWITCHBOARD_CONFIG;
  if (explicit) return path.resolve(cwd, explicit);
  const conventional = path.resolve(cwd, 'switchboard.yaml');
  return existsSync(conventional) ? conventional : undefined;
}

function formatPath(segments: readonly PropertyKey[]): string {
  let text = '';
  for (const segment of segments) {
    if (typeof segment === 'number') text += `[${segment}]`;
    else text += text ? `.${String(segment)}` : String(segment);
  }
  return text || '(top level)';
}

function describeValue(value: unknown): string {
  if (Array.isArray(value)) return 'a list';
  return value === null ? 'null' : `a ${typeof value}`;
}

/** The value at a zod issue's path in a parsed document, or undefined. */
function valueAt(document: unknown, segments: readonly PropertyKey[]): unknown {
  let value = document;
  for (const segment of segments) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<PropertyKey, unknown>)[segment];
  }
  return value;
}

/**
 * A message that quotes a value taken from the environment shows the reference as written (`"${OPENAI_API_KEY}" is
 * not a duration`), never the value: variables hold secrets, and one given to the wrong field would be printed.
 */
function withoutEnvironmentValues(message: string, written: unknown, interpolated: unknown): string {
  if (typeof written !== 'string' || typeof interpolated !== 'string' || written === interpolated) return message;
  if (interpolated === '' || !message.includes(interpolated)) return message;
  return message.replaceAll(interpolated, written);
}

function describeIssue(issue: z.core.$ZodIssue, written: unknown, interpolated: unknown): string {
  const where = formatPath(issue.path);
  if (issue.code === 'unrecognized_keys') {
    return `${where}: unknown field${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((key) => `"${key}"`).join(', ')}`;
  }
  // Inputs are reported (reportInput) only to tell a missing field from a wrong one; they are never printed.
  if (issue.code === 'invalid_type' && issue.input === undefined) return `${where}: is required`;
  if (issue.code === 'invalid_type' && issue.path.length === 0) {
    return `${where}: the file must be a YAML mapping of settings (server:, providers:, models:, ...), not ${describeValue(issue.input)}`;
  }
  const message = withoutEnvironmentValues(
    issue.message,
    valueAt(written, issue.path),
    valueAt(interpolated, issue.path),
  );
  return `${where}: ${message}`;
}

/** Parses and validates a configuration object (already read from YAML). Throws ConfigError. */
export function parseConfig(raw: unknown, source: string, options: LoadConfigOptions = {}): Config {
  const env = options.env ?? process.env;
  const unset: InterpolationError[] = [];
  let interpolated: unknown;
  try {
    interpolated = interpolate(raw ?? {}, env, '', new Set(), unset);
  } catch (error) {
    if (error instanceof InterpolationError) {
      throw new ConfigError(source, [`${error.path || '(top level)'}: ${error.message}`]);
    }
    throw error;
  }
  const result = configSchema.safeParse(interpolated, { reportInput: true });
  // A field whose variable is unset is named once, for that; the rest of the file is still checked.
  const unsetPaths = new Set(unset.map((problem) => problem.path || '(top level)'));
  const problems = [
    ...unset.map((problem) => `${problem.path || '(top level)'}: ${problem.message}`),
    ...(result.error?.issues ?? [])
      .filter((issue) => !unsetPaths.has(formatPath(issue.path)))
      .map((issue) => describeIssue(issue, raw, interpolated)),
  ];
  if (problems.length > 0 || !result.success) throw new ConfigError(source, problems);
  const config = result.data;
  const overrides = options.overrides ?? {};
  if (overrides.host !== undefined) config.server.host = overrides.host;
  if (overrides.port !== undefined) config.server.port = overrides.port;
  if (overrides.dataDir !== undefined) config.server.dataDir = overrides.dataDir;
  // The one setting also taken from the environment without a reference in the file: deployments inject it.
  if (env.SWITCHBOARD_DATABASE_URL) {
    if (!/^postgres(ql)?:\/\//.test(env.SWITCHBOARD_DATABASE_URL)) {
      throw new ConfigError(source, ['SWITCHBOARD_DATABASE_URL: must be a postgres:// or postgresql:// URL']);
    }
    config.database.url = env.SWITCHBOARD_DATABASE_URL;
  }
  config.server.dataDir = path.resolve(options.cwd ?? process.cwd(), config.server.dataDir);
  // Like the SQLite file, a local model's relative path is relative to the data directory.
  for (const provider of config.providers) {
    if (provider.type === 'local') provider.modelPath = path.resolve(config.server.dataDir, provider.modelPath);
  }
  return config;
}

/** Loads the configuration once at start-up: file (if any) + environment + command-line overrides. */
export function loadConfig(options: LoadConfigOptions = {}): LoadedConfig {
  const file = resolveConfigFile(options);
  if (!file) {
    const dataDir = path.resolve(
      options.cwd ?? process.cwd(),
      options.overrides?.dataDir ?? configSchema.parse({}).server.dataDir,
    );
    return { config: parseConfig(builtInConfig(dataDir), 'built-in defaults', options), file: undefined };
  }
  const read = readConfigFile(file);
  if ('problem' in read) throw new ConfigError(file, [read.problem]);
  const text = read.text;
  const document = parseDocument(text, { prettyErrors: true, uniqueKeys: true });
  if (document.errors.length > 0) {
    throw new ConfigError(
      file,
      document.errors.map((error) => `YAML syntax: ${error.message.split('\n')[0]}`),
    );
  }
  let raw: unknown;
  try {
    raw = document.toJS();
  } catch (error) {
    // The yaml library refuses an alias-expansion bomb ("billion laughs") here rather than while parsing.
    throw new ConfigError(file, [`YAML: ${(error as Error).message}`]);
  }
  return { config: parseConfig(raw, file, options), file };
}
