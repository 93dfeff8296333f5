import type SqliteDatabase from 'better-sqlite3';
import type { Redis } from 'ioredis';
import type { Kysely } from 'kysely';
import { latestAccessChangeId } from '../db/repositories/access-changes.js';
import type { Database } from '../db/schema.js';
import type { Logger } from '../observability/logger.js';

/**
 * How every gateway process learns that keys or access changed somewhere (a key revoked by the CLI, an account's
 * models changed on another node): it polls the `access_changes` table (one max(id) per interval) and, when Redis is
 * configured, also listens on a channel that writers publish to, which makes the change effective in milliseconds.
 * What an idle node pays for it (docs/performance.md#idle): on SQLite a poll is one prepared statement, and while the
 * Redis subscription is up the poll only backs it up, every `subscribedPollIntervalMs`, in case a writer could not
 * publish.
 */

/** How often a node that hears changes through Redis still polls: the bound when a broadcast is lost. */
export const subscribedPollIntervalMs = 5000;

export const accessChangesChannel = (keyPrefix: string): string => `${keyPrefix}access-changes`;

export interface AccessChangeFeedOptions {
  db: Kysely<Database>;
  logger: Logger;
  pollIntervalMs: number;
  /** A dedicated subscriber connection (Redis forbids other commands on it). */
  subscriber?: Redis;
  keyPrefix?: string;
  /** The latest change's id read synchronously (SQLite: a prepared statement, cheap enough to poll); through Kysely otherwise. */
  latestChangeId?: () => number;
  onChange: () => void;
  /** Called after each poll has finished (a test counts them: startup/test-hooks.ts). */
  afterPoll?: (() => void) | undefined;
}

export class AccessChangeFeed {
  private lastChangeId = 0;
  private timer: NodeJS.Timeout | undefined;
  private retry: NodeJS.Timeout | undefined;
  private subscribed = false;
  /** Whether a SUBSCRIBE has succeeded: from then on ioredis subscribes again by itself after each reconnect. */
  private subscribedOnce = false;
  private closed = false;

  constructor(private readonly options: AccessChangeFeedOptions) {}

  async start(): Promise<void> {
    this.lastChangeId = await this.latestChangeId();
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
        if (this.subscribedOnce) this.setSubscribed(true);
      });
      // While the connection is down, back to polling at the configured interval at once.
      subscriber.on('close', () => this.setSubscribed(false));
      // Subscribing waits for the connection; the poll covers the time until then, so start-up does not block.
      this.subscribe(subscriber, channel);
    }
    this.schedule();
  }

  private schedule(): void {
    if (this.closed) return;
    const { pollIntervalMs } = this.options;
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        void this.poll().finally(() => {
          this.options.afterPoll?.();
          this.schedule();
        });
      },
      this.subscribed ? Math.max(pollIntervalMs, subscribedPollIntervalMs) : pollIntervalMs,
    );
    this.timer.unref();
  }

  private setSubscribed(subscribed: boolean): void {
    if (this.subscribed === subscribed) return;
    this.subscribed = subscribed;
    // A poll waiting out the long interval is brought forward to the short one (or the other way round).
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.schedule();
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
      .then(() => {
        this.subscribedOnce = true;
        this.setSubscribed(subscriber.status === 'ready');
        this.options.logger.info({ channel }, 'listening for access changes on Redis');
      })
      .catch((error: unknown) => {
        if (this.closed) return;
        this.options.logger.warn({ err: error }, 'could not subscribe to access changes on Redis; polling, retrying');
        this.retry = setTimeout(() => this.subscribe(subscriber, channel), 1000);
        this.retry.unref();
      });
  }

  private async poll(): Promise<void> {
    try {
      const latest = await this.latestChangeId();
      if (latest !== this.lastChangeId) {
        this.lastChangeId = latest;
        this.options.onChange();
      }
    } catch (error) {
      this.options.logger.warn({ err: error }, 'could not poll access changes; keys stay cached until the next poll');
    }
  }

  private latestChangeId(): Promise<number> | number {
    return this.options.latestChangeId?.() ?? latestAccessChangeId(this.options.db);
  }

  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.retry) clearTimeout(this.retry);
  }
}

/** SQLite's `latestChangeId`: the query Kysely would build, prepared once (no promise, no query compiled per poll). */
export function sqliteLatestChangeId(sqlite: SqliteDatabase.Database): () => number {
  const statement = sqlite.prepare('select coalesce(max(id), 0) from access_changes').pluck();
  return () => Number(statement.get());
}

/** Tells every node that something changed (after the change is committed to the database). */
export async function publishAccessChange(redis: Redis, keyPrefix: string): Promise<void> {
  await redis.publish(accessChangesChannel(keyPrefix), 'changed');
}
