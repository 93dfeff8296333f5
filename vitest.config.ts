import { defineConfig } from 'vitest/config';

/**
 * Two projects in one run (one summary line at the end):
 * - `sqlite`: every test (unit, integration, compatibility) on the embedded default database;
 * - `postgres`: the integration tests again on a real PostgreSQL server (scripts/test-services.sh starts it).
 */
const integrationTests = ['test/*.test.ts'];

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Integration tests start servers and child processes; two workers match the two cores CI has.
    pool: 'forks',
    maxWorkers: 2,
    projects: [
      { extends: true, test: { name: 'sqlite', include: ['test/**/*.test.ts', 'compat/**/*.test.ts'] } },
      {
        extends: true,
        test: { name: 'postgres', include: integrationTests, env: { SWITCHBOARD_TEST_DATABASE: 'postgres' } },
      },
    ],
  },
});
