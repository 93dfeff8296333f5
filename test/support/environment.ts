/**
 * The environment the tests read. scripts/test-services.sh prints it (eval "$(bash scripts/test-services.sh)");
 * a missing variable is a failure that says how to set it, never a skip. (Files and programs some tests need, and
 * what CI does when they are missing: prerequisites.ts.)
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
