/**
 * The environment the tests read. scripts/test-services.sh prints it (eval "$(bash scripts/test-services.sh)");
 * a missing variable is a failure that says how to set it, never a skip.
 */

/** The value of `name`, or an error naming the script that sets it. */
export function requiredEnv(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run the tests through npm test (scripts/test.sh)`);
  return value;
}

/** The shared Redis the suite uses (port 6399); give each test its own key prefix. */
export const testRedisUrl = (): string => requiredEnv('SWITCHBOARD_TEST_REDIS_URL');

/** A superuser URL of the shared PostgreSQL server (the `postgres` database); create a database per test. */
export const testPostgresUrl = (): string => requiredEnv('SWITCHBOARD_TEST_POSTGRES_URL');

/** True in CI, where a missing prerequisite must fail the run rather than skip a test. */
export const inCi = (): boolean => process.env.CI === 'true' || process.env.CI === '1';
