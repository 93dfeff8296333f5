import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { killStrayServes, startServe } from './support/serve-process.js';

// bin/switchboard, the command npm installs: it must hand over to Node itself (exec, so the pid a supervisor holds is
// the server and signals reach it) with glibc's malloc trim threshold set, and keep a value the operator chose.

/** A server with one model on a port nothing listens on: the launcher is the subject, not the upstream. */
const config = {
  providers: [{ name: 'mock', type: 'openai', base_url: 'http://127.0.0.1:9/v1' }],
  models: [{ name: 'mock', provider: 'mock' }],
};

afterAll(killStrayServes);

function environmentOf(pid: number): Map<string, string> {
  const entries = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').filter(Boolean);
  return new Map(entries.map((entry) => [entry.slice(0, entry.indexOf('=')), entry.slice(entry.indexOf('=') + 1)]));
}

describe.runIf(process.platform === 'linux')('the switchboard launcher', () => {
  it('execs node with MALLOC_TRIM_THRESHOLD_ set, and the server stops cleanly on SIGTERM', async () => {
    const serve = await startServe({ config, env: { MALLOC_TRIM_THRESHOLD_: '' }, launcher: true });
    const pid = serve.process.pid as number;
    // The spawned pid is Node serving, not a shell waiting for it.
    expect(readFileSync(`/proc/${pid}/comm`, 'utf8').trim()).toBe('node');
    expect(environmentOf(pid).get('MALLOC_TRIM_THRESHOLD_')).toBe('131072');
    const health = await fetch(`${serve.url}/healthz`);
    expect(health.status).toBe(200);
    expect(await serve.stop('SIGTERM')).toBe(0);
  });

  it("keeps the operator's own value", async () => {
    const serve = await startServe({ config, env: { MALLOC_TRIM_THRESHOLD_: '262144' }, launcher: true });
    expect(environmentOf(serve.process.pid as number).get('MALLOC_TRIM_THRESHOLD_')).toBe('262144');
    expect(await serve.stop('SIGTERM')).toBe(0);
  });
});
