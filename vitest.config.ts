import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'compat/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Integration tests start servers and child processes; two workers match the two cores CI has.
    pool: 'forks',
    maxWorkers: 2,
  },
});
