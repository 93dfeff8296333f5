import type { Redis } from 'ioredis';
import type { RateLimiterAbstract, RateLimiterRes } from 'rate-limiter-flexible';
import type { Config } from '../config/schema.js';
import type { Logger } from '../observability/logger.js';

/**
 * How many invitations may be made, per account and per inviting user, in a window (`console.invitation_limit_*`),
 * so that a compromised owner's session or a runaway script cannot make them without end. Counted with
 * rate-limiter-flexible: in this process's memory, or in Redis when it is configured (every node counts alike, and
 * this process's own count answers while Redis cannot, logged). The workers of `serve --workers`
 * without Redis ask their primary (ipc-invitation-limit.ts). The cap on pending invitations is the database's
 * (invitations.ts).
 */

export interface InvitationLimitPolicy {
  perAccount: number;
  perUser: number;
  windowMs: number;
}

export interface InvitationLimit {
  /** Counts one invitation by `userId` to `accountId`: 0 when it may be made, else the seconds to wait. */
  consume(accountId: string, userId: string): Promise<number>;
  close(): void;
}

/** The policy as configured. */
export function invitationLimitPolicy(config: Config): InvitationLimitPolicy {
  return {
    perAccount: config.console.invitationLimitPerAccount,
    perUser: config.console.invitationLimitPerUser,
    windowMs: config.console.invitationLimitWindowMs,
  };
}

/** The library's two counters (per user, per account), in memory or in Redis. */
export class FlexibleInvitationLimit implements InvitationLimit {
  private counters: Promise<Counters> | undefined;

  constructor(
    private readonly policy: InvitationLimitPolicy,
    private readonly redis?: { client: Redis; keyPrefix: string; logger: Logger },
  ) {}

  /** The library is loaded with the first invitation, not at start-up: invitations are rare. */
  private countersReady(): Promise<Counters> {
    this.counters ??= import('rate-limiter-flexible').then((library) => {
      const duration = Math.max(1, Math.ceil(this.policy.windowMs / 1000));
      const redis = this.redis;
      const counter = (name: string, points: number): Counter => {
        const local = new library.RateLimiterMemory({ points, duration, keyPrefix: name });
        if (!redis) return { local };
        const options = { keyPrefix: `${redis.keyPrefix}${name}`, points, duration, rejectIfRedisNotReady: true };
        return { local, shared: new library.RateLimiterRedis({ storeClient: redis.client, ...options }) };
      };
      return {
        perUser: counter('invitations-by-user', this.policy.perUser),
        perAccount: counter('invitations-to-account', this.policy.perAccount),
        isRefusal: (value: unknown): value is RateLimiterRes => value instanceof library.RateLimiterRes,
      };
    });
    return this.counters;
  }

  async consume(accountId: string, userId: string): Promise<number> {
    const counters = await this.countersReady();
    // The user's count first: a user past their own limit then spends none of the account's, which other owners share.
    const userWait = await this.waitOf(counters.perUser, userId, counters);
    if (userWait > 0) return userWait;
    const accountWait = await this.waitOf(counters.perAccount, accountId, counters);
    if (accountWait > 0) {
      await Promise.all([
        counters.perUser.local.reward(userId),
        counters.perUser.shared?.reward(userId).catch(() => undefined),
      ]);
    }
    return accountWait;
  }

  /**
   * Counts one point: 0 when the library let it be consumed, else the seconds until it could be. This node's own
   * count takes every point too, and answers while Redis cannot (logged), as the sign-in throttle's does.
   */
  private async waitOf(counter: Counter, key: string, counters: Counters): Promise<number> {
    const wait = async (consumed: Promise<RateLimiterRes>) => {
      try {
        await consumed;
        return 0;
      } catch (refusal) {
        if (counters.isRefusal(refusal)) return Math.max(1, Math.ceil(refusal.msBeforeNext / 1000));
        throw refusal;
      }
    };
    const localWait = await wait(counter.local.consume(key));
    if (!counter.shared) return localWait;
    try {
      return await wait(counter.shared.consume(key));
    } catch (error) {
      this.redis?.logger.warn({ err: error }, 'Redis unreachable: invitations are limited by this node alone');
      return localWait;
    }
  }

  close(): void {}
}

interface Counter {
  /** This process's count: the only one without Redis, the fallback with it. */
  local: RateLimiterAbstract;
  shared?: RateLimiterAbstract;
}

interface Counters {
  perUser: Counter;
  perAccount: Counter;
  isRefusal: (value: unknown) => value is RateLimiterRes;
}
