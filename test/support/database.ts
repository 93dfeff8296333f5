import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { parseConfig } from '../../src/config/loader.js';
import type { Config } from '../../src/config/schema.js';
import { type DatabaseHandle, openDatabase } from '../../src/db/connect.js';
import { insertAccount } from '../../src/db/repositories/accounts.js';
import { testPostgresUrl } from './environment.js';

/**
 * Which database the integration tests run on. vitest.config.ts runs the integration suite twice: once on the
 * embedded SQLite, once with SWITCHBOARD_TEST_DATABASE=postgres against the real PostgreSQL server that
 * scripts/test-services.sh starts; every test gateway then gets a fresh database of its own.
 */
export const testEngine: 'sqlite' | 'postgres' =
  process.env.SWITCHBOARD_TEST_DATABASE === 'postgres' ? 'postgres' : 'sqlite';

export interface TestDatabase {
  /** postgres:// URL of a fresh database, or undefined for SQLite (the data directory holds it). */
  url: string | undefined;
  /** Environment for spawned CLI/serve processes so they open the same database. */
  env: Record<string, string>;
  drop(): Promise<void>;
}

const adminUrl = testPostgresUrl;

/** A fresh database of `engine` (default: the project's engine, see testEngine). */
export async function createTestDatabase(engine: 'sqlite' | 'postgres' = testEngine): Promise<TestDatabase> {
  if (engine === 'sqlite') return { url: undefined, env: {}, drop: async () => {} };
  const name = `sbtest_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl() });
  await admin.connect();
  try {
    await admin.query(`create database ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(adminUrl());
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    env: { SWITCHBOARD_DATABASE_URL: url.toString() },
    drop: async () => {
      const client = new pg.Client({ connectionString: adminUrl() });
      await client.connect();
      try {
        await client.query(`drop database if exists ${name} with (force)`);
      } finally {
        await client.end();
      }
    },
  };
}

export interface OpenTestDatabase {
  /** The database, opened (and so migrated to the latest layout) as the server opens it. */
  handle: DatabaseHandle;
  /** The data directory of its own (SQLite's file, spill files), removed by close(). */
  directory: string;
  /** What it was opened with, to open a second handle on the same database. */
  config: Config;
  /** Closes the handle, drops the database and removes the directory. */
  close(): Promise<void>;
}

/**
 * A fresh database of `engine` opened the way the server opens it, in a fresh data directory named
 * `switchboard-<name>-…`: what the repository and migration tests share instead of each doing the dance itself.
 */
export async function openTestDatabase(
  name: string,
  engine: 'sqlite' | 'postgres' = testEngine,
): Promise<OpenTestDatabase> {
  const directory = mkdtempSync(path.join(tmpdir(), `switchboard-${name}-`));
  const database = await createTestDatabase(engine);
  const removeBoth = async () => {
    await database.drop();
    rmSync(directory, { recursive: true, force: true });
  };
  const config = parseConfig(
    { server: { data_dir: directory }, ...(database.url ? { database: { url: database.url } } : {}) },
    'test',
  );
  let handle: DatabaseHandle;
  try {
    handle = await openDatabase(config);
  } catch (error) {
    await removeBoth();
    throw error;
  }
  return {
    handle,
    directory,
    config,
    close: async () => {
      await handle.close();
      await removeBoth();
    },
  };
}

/** Accounts `ids` (each named after its id, every model allowed, no limits) straight into the table. */
export async function insertTestAccounts(handle: DatabaseHandle, ids: string[], createdAt: number): Promise<void> {
  for (const id of ids) {
    await insertAccount(handle.db, {
      id,
      name: id,
      allowed_models: '["*"]',
      disabled: 0,
      log_bodies: 0,
      created_at: createdAt,
      limits: null,
    });
  }
}
