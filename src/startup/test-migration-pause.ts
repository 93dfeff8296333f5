import { existsSync, writeFileSync } from 'node:fs';

/**
 * Test-only pause inside the migrations. With NODE_ENV=test and SWITCHBOARD_TEST_MIGRATION_PAUSE_FILE set, the first
 * migration a process applies is followed by a pause, still inside the migrations' transaction: the file is created,
 * and migrating goes on once the test deletes it, so a test can signal a server while it migrates. Without both
 * variables there is no pause: production never runs this.
 */
export function testMigrationPause(env: NodeJS.ProcessEnv = process.env): (() => Promise<void>) | undefined {
  const file = env.SWITCHBOARD_TEST_MIGRATION_PAUSE_FILE;
  if (env.NODE_ENV !== 'test' || !file) return undefined;
  let paused = false;
  return async () => {
    if (paused) return;
    paused = true;
    writeFileSync(file, '');
    while (existsSync(file)) await new Promise((resolve) => setTimeout(resolve, 20));
  };
}
