import { EventEmitter } from 'node:events';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { askThrottleOnPrimary, serveThrottleOnPrimary } from '../../src/cluster/throttle-channel.js';
import { createLogger } from '../../src/observability/logger.js';
import { IpcInvitationLimit, serveInvitationLimit } from '../../src/users/ipc-invitation-limit.js';
import { IpcSignInThrottle, serveSignInThrottle } from '../../src/users/ipc-sign-in-throttle.js';
import { MemorySignInThrottle } from '../../src/users/sign-in-throttle.js';

/**
 * The throttles of `serve --workers` without Redis (cluster/throttle-channel.ts): a worker's steps reach the primary's
 * one count and come back as seconds to wait; without a primary, the worker's own count answers and the log says so.
 * A worker's channel to its primary is played by an emitter whose send() hands the message to the primary's handler.
 */

function workerChannel(primary: ((message: unknown) => void) | undefined) {
  const channel = new EventEmitter() as unknown as NodeJS.Process;
  channel.send = ((message: unknown) => {
    if (!primary) return false;
    primary(structuredClone(message));
    return true;
  }) as NodeJS.Process['send'];
  return channel;
}

/** A worker's channel to a primary served by `serve`, whose answers come back as the worker's messages. */
function connectedWorker(serve: (send: (message: unknown) => void) => (message: unknown) => void) {
  const answers = new EventEmitter();
  const channel = workerChannel(serve((message) => answers.emit('message', structuredClone(message))));
  answers.on('message', (message) => (channel as unknown as EventEmitter).emit('message', message));
  return channel;
}

function recordingLogger() {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return { logger: createLogger('info', sink), lines };
}

describe('the throttle channel', () => {
  it("answers a worker's step with the primary's wait for its subject", async () => {
    const asked: Array<[string, readonly string[]]> = [];
    const worker = connectedWorker((send) =>
      serveThrottleOnPrimary<'count'>({
        channel: 'test-throttle',
        steps: ['count'],
        answer: async (step, subject) => {
          asked.push([step, subject]);
          return asked.length;
        },
        send,
      }),
    );
    const { logger, lines } = recordingLogger();
    const throttle = askThrottleOnPrimary<'count'>({ channel: 'test-throttle', logger, fallBack: 'n/a', ipc: worker });
    expect(await throttle.ask('count', ['a', 'b'])).toBe(1);
    expect(await throttle.ask('count', ['c', 'd'])).toBe(2);
    expect(asked).toEqual([
      ['count', ['a', 'b']],
      ['count', ['c', 'd']],
    ]);
    expect(lines).toEqual([]);
    throttle.close();
  });

  it('answers 0 for a step the primary could not count, and ignores steps and channels not its own', async () => {
    const sent: unknown[] = [];
    const serve = serveThrottleOnPrimary<'count'>({
      channel: 'test-throttle',
      steps: ['count'],
      answer: async () => {
        throw new Error('cannot count');
      },
      send: (message) => sent.push(message),
    });
    serve({ channel: 'test-throttle', id: 1, kind: 'count', subject: ['x'] });
    serve({ channel: 'test-throttle', id: 2, kind: 'answer', waitSeconds: 5 });
    serve({ channel: 'test-throttle', id: 3, kind: 'toString' });
    serve({ channel: 'another', id: 4, kind: 'count' });
    serve(null);
    await new Promise((resolve) => setImmediate(resolve));
    expect(sent).toEqual([{ channel: 'test-throttle', id: 1, kind: 'answer', waitSeconds: 0 }]);
  });

  it("falls back on the worker's own count when there is no primary, and logs it", async () => {
    const { logger, lines } = recordingLogger();
    const throttle = askThrottleOnPrimary<'count'>({
      channel: 'test-throttle',
      logger,
      fallBack: 'counted by this worker',
      ipc: workerChannel(undefined),
    });
    expect(await throttle.ask('count', ['a'])).toBeUndefined();
    expect(lines.join('')).toContain('the primary process did not answer: counted by this worker');
    throttle.close();
  });
});

describe('its two throttles', () => {
  it("count a user's invitations on the primary, and on the worker without one", async () => {
    const primaryCounts: string[] = [];
    const primaryLimit = {
      consume: async (accountId: string, userId: string) => {
        primaryCounts.push(`${accountId}/${userId}`);
        return primaryCounts.length > 1 ? 30 : 0;
      },
      close: () => {},
    };
    const worker = connectedWorker((send) => serveInvitationLimit(primaryLimit, send));
    const localCounts: string[] = [];
    const local = {
      consume: async (accountId: string, userId: string) => {
        localCounts.push(`${accountId}/${userId}`);
        return 7;
      },
      close: () => {},
    };
    const { logger, lines } = recordingLogger();
    const limit = new IpcInvitationLimit(local, logger, worker);
    expect([await limit.consume('acct', 'user'), await limit.consume('acct', 'user')]).toEqual([0, 30]);
    expect([primaryCounts, localCounts]).toEqual([['acct/user', 'acct/user'], []]);
    limit.close();

    const alone = new IpcInvitationLimit(local, logger, workerChannel(undefined));
    expect(await alone.consume('acct', 'user')).toBe(7);
    expect(lines.join('')).toContain('invitations are limited by this worker');
    alone.close();
  });

  it('throttle sign-in attempts on the primary, and on the worker without one', async () => {
    const policy = { freeFailures: 1, maxDelayMs: 60_000, forgetAfterMs: 60_000 };
    const primaryThrottle = new MemorySignInThrottle(policy);
    const worker = connectedWorker((send) => serveSignInThrottle(primaryThrottle, send));
    const { logger, lines } = recordingLogger();
    const throttle = new IpcSignInThrottle(new MemorySignInThrottle(policy), logger, worker);
    expect(await throttle.beginAttempt('a@example.test', '10.0.0.1')).toBe(0);
    expect(await throttle.beginAttempt('a@example.test', '10.0.0.1')).toBeGreaterThan(0);
    // A withdrawn attempt is uncounted on the primary too.
    await throttle.withdrawAttempt('a@example.test', '10.0.0.1');
    expect(primaryThrottle.waitMs('a@example.test', '10.0.0.1')).toBe(0);
    expect(await throttle.beginAttempt('a@example.test', '10.0.0.1')).toBe(0);
    await throttle.attemptSucceeded('a@example.test', '10.0.0.1');
    expect(primaryThrottle.waitMs('a@example.test', '10.0.0.1')).toBe(0);
    expect(lines).toEqual([]);
    throttle.close();

    // Without a primary, the worker's own count (which mirrored the primary's) answers.
    const local = new MemorySignInThrottle(policy);
    const alone = new IpcSignInThrottle(local, logger, workerChannel(undefined));
    expect(await alone.beginAttempt('b@example.test', '10.0.0.2')).toBe(0);
    expect(await alone.beginAttempt('b@example.test', '10.0.0.2')).toBeGreaterThan(0);
    expect(lines.join('')).toContain('sign-in attempts are throttled by this worker');
    alone.close();
    primaryThrottle.close();
  });
});
