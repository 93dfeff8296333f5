import { existsSync } from 'node:fs';
import path from 'node:path';
import { defaultModel } from '../../src/providers/local/default-model.js';
import { projectRoot } from './cli.js';

/**
 * Things some tests need from outside the repository, which `npm test` (scripts/test.sh) prepares but a download or
 * an install can fail to provide. On a developer's machine a missing one skips those tests and says why on stderr;
 * in CI (CI=true) it is a failure, so a green CI run has run every test. (PostgreSQL, Redis and Chromium are always
 * required: their tests fail outright without them.)
 */

/** True in CI, where a missing prerequisite must fail the run rather than skip a test. */
export const inCi = (): boolean => process.env.CI === 'true' || process.env.CI === '1';

/** The built-in model file (SWITCHBOARD_TEST_MODEL points at another GGUF to use instead). */
export const localModelPath =
  process.env.SWITCHBOARD_TEST_MODEL ?? path.join(projectRoot, 'data', 'models', defaultModel.fileName);

/** The Python of the venv with the official openai and anthropic SDKs. */
export const compatPython = path.join(projectRoot, '.venv-compat', 'bin', 'python');

const prerequisites = {
  'built-in model': {
    present: () => existsSync(localModelPath),
    missing: () => `${localModelPath} is absent (npx switchboard models fetch --data-dir data)`,
  },
  'Python SDK environment': {
    present: () => existsSync(compatPython),
    missing: () => `${compatPython} is absent (bash scripts/setup-python-compat.sh)`,
  },
} satisfies Record<string, { present: () => boolean; missing: () => string }>;

export type Prerequisite = keyof typeof prerequisites;

/** Whether `name` is there; when it is not: false (the caller skips) locally, an error in CI. */
export function hasPrerequisite(name: Prerequisite): boolean {
  const prerequisite = prerequisites[name];
  if (prerequisite.present()) return true;
  const reason = `the ${name} is missing: ${prerequisite.missing()}`;
  if (inCi()) {
    throw new Error(`${reason}. In CI (CI=true) a missing prerequisite fails the run instead of skipping tests.`);
  }
  process.stderr.write(`skipping tests that need it: ${reason}\n`);
  return false;
}
