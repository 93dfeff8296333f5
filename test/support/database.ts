import { randomBytes } from 'node:crypto';
import pg from 'pg';
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
