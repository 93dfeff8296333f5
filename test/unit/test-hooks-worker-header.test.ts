import { describe, expect, it } from 'vitest';
import { testHooksFromEnvironment } from '../../src/startup/test-hooks.js';

/** The worker header is a test's only: outside NODE_ENV=test the environment adds nothing to upstream requests. */
describe('testHooksFromEnvironment', () => {
  it('names the process in the header SWITCHBOARD_TEST_WORKER_HEADER gives, under NODE_ENV=test only', () => {
    const header = { SWITCHBOARD_TEST_WORKER_HEADER: 'X-Test-Worker' };
    expect(testHooksFromEnvironment({ NODE_ENV: 'test', ...header }).upstreamHeaders).toEqual({
      'x-test-worker': String(process.pid),
    });
    expect(testHooksFromEnvironment({ NODE_ENV: 'production', ...header })).toEqual({});
    expect(testHooksFromEnvironment({ ...header })).toEqual({});
    expect(testHooksFromEnvironment({ NODE_ENV: 'test' })).toEqual({});
  });
});
