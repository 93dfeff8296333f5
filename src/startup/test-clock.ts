import { readFileSync } from 'node:fs';

/**
 * Test-only clock control. With NODE_ENV=test and SWITCHBOARD_TEST_CLOCK_FILE set, `Date.now()` is the real time plus
 * the offset in milliseconds that the file holds (read at every call, so a test that rewrites it moves a running
 * server across a day boundary at once). Budgets' UTC periods and log times follow it; Redis's windows keep Redis's
 * own clock. Without both variables nothing is changed: production never runs this.
 */
export function installTestClock(env: NodeJS.ProcessEnv = process.env): void {
  const file = env.SWITCHBOARD_TEST_CLOCK_FILE;
  if (env.NODE_ENV !== 'test' || !file) return;
  const realNow = Date.now.bind(Date);
  const offset = () => {
    try {
      return Number(readFileSync(file, 'utf8').trim()) || 0;
    } catch {
      return 0;
    }
  };
  Date.now = () => realNow() + offset();
}
