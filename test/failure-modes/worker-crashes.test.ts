import { describe, expect, it } from 'vitest';
import { useMockForServes } from '../support/serve-fixture.js';
import { childProcessIds, prepareServe, startServe } from '../support/serve-process.js';
import { isRefused, waitFor } from '../support/wait.js';
import { chat, mockModels } from './support.js';

/**
 * docs/operations.md, "Several processes on one machine": a worker that crashes is replaced; more than five crashes
 * a minute stop the server (exit 1), and then no worker is left behind holding the port; retention runs in one
 * worker (and in its replacement).
 */

const serves = useMockForServes();

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('serve --workers 2', () => {
  it('replaces each crashed worker, and stops for good at the sixth crash within a minute', async () => {
    const files = await prepareServe({
      config: { request_log: { flush_interval: '100ms' }, ...mockModels(serves.mock) },
    });
    await files.cli('accounts', 'create', 'acme');
    const { key } = await files.cli<{ key: string }>('keys', 'create', '--account', 'acme', '--name', 'app');
    const node = await startServe({ reuse: files, args: ['--workers', '2'] });
    const listening = () =>
      node.output
        .filter((line) => line.includes('"msg":"switchboard is listening"'))
        .map((line) => (JSON.parse(line) as { url: string }).url);
    let workers = childProcessIds(node.pid);
    expect(workers).toHaveLength(2);

    for (let crash = 1; crash <= 5; crash++) {
      const victim = workers[crash % 2] as number;
      process.kill(victim, 'SIGKILL');
      workers = await waitFor(`a replacement for crashed worker ${crash}`, () => {
        const current = childProcessIds(node.pid);
        return current.length === 2 && !current.includes(victim) ? current : undefined;
      });
      // Each worker says when it listens (the two first ones, then one per replacement): on the same port.
      await waitFor(`replacement ${crash} to listen`, () => listening().length === 2 + crash);
      expect(new Set(listening())).toEqual(new Set([node.url]));
      // The replacement serves: every request gets an answer from some worker.
      const results = await Promise.all(
        Array.from({ length: 6 }, () =>
          chat(node, key).catch((error: Error) => ({ status: `${crash} ${error.cause}` })),
        ),
      );
      expect(
        results.map((result) => result.status),
        node.output.join('\n'),
      ).toEqual(Array(6).fill(200));
    }
    expect(node.process.exitCode).toBeNull();

    // The sixth crash within the minute: the primary gives up, exits 1, and takes its workers with it.
    const [victim] = workers;
    process.kill(victim as number, 'SIGKILL');
    expect(await node.exited).toBe(1);
    expect(node.output.join('\n')).toContain('workers keep crashing; giving up');
    await waitFor('every worker to be gone', () => workers.every((pid) => !alive(pid)));
    expect(await isRefused(node.url)).toBe(true);
  });

  it('runs retention in one worker, and in its replacement after it crashes', async () => {
    const node = await startServe({
      config: { logging: { level: 'debug' }, request_log: { retention_interval: '1s' }, ...mockModels(serves.mock) },
      args: ['--workers', '2'],
    });
    const runners = () =>
      node.output
        .filter((line) => line.includes('"msg":"request-log retention ran"'))
        .map((line) => (JSON.parse(line) as { pid: number }).pid);
    await waitFor('three runs of the job', () => runners().length >= 3, { timeoutMs: 30_000 });
    const [runner] = new Set(runners());
    expect(new Set(runners()).size).toBe(1);
    expect(childProcessIds(node.pid)).toContain(runner);

    process.kill(runner as number, 'SIGKILL');
    const before = runners().length;
    await waitFor('runs by the replacement', () => runners().slice(before).length >= 2, { timeoutMs: 30_000 });
    const after = new Set(runners().slice(before));
    expect(after.size).toBe(1);
    expect(after.has(runner as number)).toBe(false);
    expect(childProcessIds(node.pid)).toContain([...after][0]);
    expect(await node.stop()).toBe(0);
  });
});

describe('a promise a library leaves without a handler', () => {
  it('is logged, and the server goes on serving', async () => {
    const files = await prepareServe({ config: mockModels(serves.mock) });
    await files.cli('accounts', 'create', 'acme');
    const { key } = await files.cli<{ key: string }>('keys', 'create', '--account', 'acme', '--name', 'app');
    // Preloaded into the real process: on SIGUSR2 a promise is rejected with nothing to catch it.
    const stray = "process.on('SIGUSR2',()=>{Promise.reject(new Error('stray-rejection'))})";
    const node = await startServe({
      reuse: files,
      env: { NODE_OPTIONS: `--import=data:text/javascript,${encodeURIComponent(stray)}` },
    });
    expect((await chat(node, key)).status).toBe(200);
    node.process.kill('SIGUSR2');
    await waitFor('the rejection to be logged', () =>
      node.output.some((line) => line.includes('unhandled promise rejection') && line.includes('stray-rejection')),
    );
    expect(alive(node.pid)).toBe(true);
    expect((await chat(node, key)).status).toBe(200);
    expect(await node.stop()).toBe(0);
  });
});
