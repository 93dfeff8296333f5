import type { Command, Redis } from 'ioredis';
import { redactUrl } from '../db/connect.js';
import type { Logger } from '../observability/logger.js';

export interface RedisOptions {
  url: string;
  commandTimeoutMs: number;
  logger: Logger;
  /** Called with true when the connection becomes ready, false when it is lost. */
  onStatus?: (up: boolean) => void;
}

/**
 * A Redis connection that fails fast: no offline queue (a command while disconnected rejects at once instead of
 * waiting for a reconnect), a per-command timeout, and reconnects in the background. The limiter turns those
 * failures into its configured fallback, so a Redis outage never hangs a request.
 */
/**
 * Resolves once the connection is ready, or after `timeoutMs` (start-up then goes on: the limiter's fallback
 * covers an unreachable Redis, and the connection keeps retrying in the background).
 */
export function waitUntilReady(redis: Redis, timeoutMs: number): Promise<boolean> {
  if (redis.status === 'ready') return Promise.resolve(true);
  return new Promise((resolve) => {
    const done = (ready: boolean) => {
      clearTimeout(timer);
      redis.off('ready', onReady);
      resolve(ready);
    };
    const onReady = () => done(true);
    const timer = setTimeout(() => done(false), timeoutMs);
    redis.on('ready', onReady);
  });
}

export async function connectRedis(
  options: RedisOptions,
  mode: 'commands' | 'subscriber' = 'commands',
): Promise<Redis> {
  // Loaded only when Redis is configured.
  const { Redis: RedisClient } = await import('ioredis');
  const redis = new RedisClient(options.url, {
    enableOfflineQueue: mode === 'subscriber',
    maxRetriesPerRequest: mode === 'subscriber' ? null : 0,
    connectTimeout: 2000,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2000),
    lazyConnect: false,
    // ioredis's ready check sends INFO, which Redis refuses on a connection in subscriber mode. Seen in a full test
    // run: the check failed with "Connection in subscriber mode, only subscriber commands may be used", the connection
    // was torn down and that node stayed unsubscribed (on the poll) for the rest of the test. A subscriber
    // connection needs no ready check: SUBSCRIBE is answered even while Redis loads its data.
    enableReadyCheck: mode !== 'subscriber',
  });
  if (mode === 'commands') armCommandTimeouts(redis, options.commandTimeoutMs);
  let up: boolean | undefined;
  const report = (next: boolean, error?: unknown) => {
    if (up === next) return;
    up = next;
    options.onStatus?.(next);
    if (next) options.logger.info({ redis: redactUrl(options.url), mode }, 'Redis connected');
    else
      options.logger.warn(
        { redis: redactUrl(options.url), mode, err: error },
        'Redis unreachable; reconnecting in the background',
      );
  };
  redis.on('ready', () => report(true));
  redis.on('error', (error: unknown) => report(false, error));
  redis.on('end', () => report(false));
  redis.on('close', () => report(false));
  return redis;
}

/**
 * `redis.command_timeout` for every command of a connection. Not ioredis's own `commandTimeout`: its timer rejects
 * before Node has read a reply already waiting on the socket, so a node whose event loop was busy longer than the
 * timeout took Redis for unreachable (seen under load: the limiter fell back to local counting although Redis had
 * run the script in time, and counted it). Here the verdict waits for setImmediate, which runs after the event loop
 * has polled the sockets: only a reply that really has not come is a timeout.
 */
function armCommandTimeouts(redis: Redis, timeoutMs: number): void {
  const send = redis.sendCommand.bind(redis);
  redis.sendCommand = (command: Command, stream) => {
    const timer = setTimeout(
      () =>
        setImmediate(() => {
          if (!command.isResolved) command.reject(new Error('Command timed out'));
        }),
      timeoutMs,
    );
    const clear = () => clearTimeout(timer);
    command.promise.then(clear, clear);
    return send(command, stream);
  };
}
