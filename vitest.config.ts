import { configDefaults, defineConfig } from 'vitest/config';

/**
 * Four projects in one run (one summary line at the end):
 * - `unit`: the unit tests (test/unit), many small files that start no server: one worker process runs file after
 *   file with the modules loaded once (isolate: false), instead of a fresh process and module graph per file;
 * - `sqlite`: every other test (integration, compatibility) on the embedded default database;
 * - `postgres`: the integration tests again on a real PostgreSQL server (scripts/test-services.sh starts it);
 * - `failure-modes`: the operational promises of docs/operations.md, with real `serve` processes and Redis and
 *   PostgreSQL servers of their own that the tests stop, kill and restart (each file picks its engines itself).
 */
const unitTests = ['test/unit/**/*.test.ts'];
const integrationTests = ['test/*.test.ts'];
// Integration tests whose every command runs on a data directory of its own (SQLite), whatever the project: run once.
const sqliteOnlyTests = [
  'test/cli-environment.test.ts',
  'test/cli-bad-input.generated.test.ts',
  'test/npm-start.test.ts',
];
const failureModeTests = ['test/failure-modes/**/*.test.ts'];

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Integration tests start servers and child processes; two workers match the two cores CI has.
    pool: 'forks',
    maxWorkers: 2,
    projects: [
      { extends: true, test: { name: 'unit', include: unitTests, isolate: false } },
      {
        extends: true,
        test: {
          name: 'sqlite',
          include: ['test/**/*.test.ts', 'compat/**/*.test.ts'],
          exclude: [...configDefaults.exclude, ...failureModeTests, ...unitTests],
        },
      },
      {
        extends: true,
        test: {
          name: 'postgres',
          include: integrationTests,
          exclude: [...configDefaults.exclude, ...sqliteOnlyTests],
          env: { SWITCHBOARD_TEST_DATABASE: 'postgres' },
        },
      },
      // Slow by nature (servers started, killed and restarted): generous per-test time, still waits for conditions.
      { extends: true, test: { name: 'failure-modes', include: failureModeTests, testTimeout: 90_000 } },
    ],
  },
});
