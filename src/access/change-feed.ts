import type { Redis } from 'ioredis';
import type { Kysely } from 'kysely';
import { latestAccessChangeId } from '../db/repositories/access-changes.js';
import type { Database } from '../db/schema.js';
import type { Logger } from '../observability/logger.js';

/**
 * How every gateway process learns that keys or access changed somewhere (a key revoked by the CLI, an account's
 * models changed on another node): it polls the `access_changes` table (cheap: one max(id) per interval) and,
 * when Redis is configured, also listens on a channel that writers publish to, which makes the change effective
 * in milliseconds instead of within the poll interval.
 */

export const accessChangesChannel = (keyPrefix: string): string => `${keyPrefix}access-changes`;

export interface AccessChangeFeedOptions {
  db: Kysely<Database>;
  logger: Logger;
  pollIntervalMs: number;
  /** A dedicated subscriber connection (Redis forbids other commands on it). */
  subscriber?: Redis;
  keyPrefix?: string;
  onChange: () => void;
}

export class AccessChangeFeed {
  private lastChangeId = 0;
  private timer: NodeJS.Timeout | undefined;
  private polling = false;
  private retry: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(private readonly options: AccessChangeFeedOptions) {}

  async start(): Promise<void> {
    this.lastChangeId = await latestAccessChangeId(this.options.db);
    this.timer = setInterval(() => void this.poll(), this.options.pollIntervalMs);
    this.timer.unref();
    const subscriber = this.options.subscriber;
    if (subscriber) {
      const channel = accessChangesChannel(this.options.keyPrefix ?? '');
      subscriber.on('message', (received: string) => {
        if (received === channel) this.options.onChange();
      });
      // A change published while the connection was down is never delivered: after a reconnect (ioredis
      // resubscribes by itself), forget every cached key once rather than wait for the poll.
      let connectedBefore = subscriber.status === 'ready';
      subscriber.on('ready', () => {
        if (connectedBefore) this.options.onChange();
        connectedBefore = true;
      });
      // Subscribing waits for the connection; the poll covers the time until then, so start-up does not block.
      this.subscribe(subscriber, channel);
    }
  }

  /**
   * Subscribes, and tries again a second later if that fails: ioredis re-subscribes after a reconnect only to
   * channels it has subscribed to, so a first SUBSCRIBE lost at start-up would leave the node on the poll for good.
   */
  private subscribe(subscriber: Redis, channel: string): void {
    if (this.closed) return;
    subscriber
      .subscribe(channel)
      .then(() => this.options.logger.info({ channel }, 'listening for access changes on Redis'))
      .catch((error: unknown) => {
        if (this.closed) return;
        this.options.logger.warn({ err: error }, 'could not subscribe to access changes on Redis; polling, retrying');
        this.retry = setTimeout(() => this.subscribe(subscriber, channel), 1000);
        this.retry.unref();
      });
  }

  private async poll(): Promise<void> {
    if (this.polling) return;
    this.polling = true;
    try {
      const latest = await latestAccessChangeId(this.options.db);
      if (latest !== this.lastChangeId) {
        this.lastChangeId = latest;
        this.options.onChange();
      }
    } catch (error) {
      this.options.logger.warn({ err: error }, 'could not poll access changes; keys stay cached until the next poll');
    } finally {
      this.polling = false;
    }
  }

  close(): void {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    if (this.retry) clearTimeout(this.retry);
  }
}

/** Tells every node that something changed (after the change is committed to the database). */
export async function publishAccessChange(redis: Redis, keyPrefix: string): Promise<void> {
  await redis.publish(accessChangesChannel(keyPrefix), 'changed');
}
