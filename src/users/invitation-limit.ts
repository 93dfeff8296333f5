import type { Redis } from 'ioredis';
import type { RateLimiterAbstract, RateLimiterRes } from 'rate-limiter-flexible';
import type { Config } from '../config/schema.js';

/**
 * How many invitations may be made, per account and per inviting user, in a window (`console.invitation_limit_*`),
 * so that a compromised owner's session or a runaway script cannot make them without end. Counted with
 * rate-limiter-flexible: in this process's memory, or in Redis when it is configured (every node counts alike, and
 * the library falls back to this process's own count while Redis cannot answer). The workers of `serve --workers`
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
    private readonly redis?: { client: Redis; keyPrefix: string },
  ) {}

  /** The library is loaded with the first invitation, not at start-up: invitations are rare. */
  private countersReady(): Promise<Counters> {
    this.counters ??= import('rate-limiter-flexible').then((library) => {
      const duration = Math.max(1, Math.ceil(this.policy.windowMs / 1000));
      const redis = this.redis;
      const counter = (name: string, points: number): RateLimiterAbstract => {
        const memory = new library.RateLimiterMemory({ points, duration, keyPrefix: name });
        if (!redis) return memory;
        return new library.RateLimiterRedis({
          storeClient: redis.client,
          keyPrefix: `${redis.keyPrefix}${name}`,
          points,
          duration,
          rejectIfRedisNotReady: true,
          insuranceLimiter: memory,
        });
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
    const userWait = await waitOf(counters.perUser.consume(userId), counters);
    if (userWait > 0) return userWait;
    const accountWait = await waitOf(counters.perAccount.consume(accountId), counters);
    if (accountWait > 0) await counters.perUser.reward(userId).catch(() => undefined);
    return accountWait;
  }

  close(): void {}
}

interface Counters {
  perUser: RateLimiterAbstract;
  perAccount: RateLimiterAbstract;
  isRefusal: (value: unknown) => value is RateLimiterRes;
}

/** 0 when the library let the points be consumed, else the seconds until they could be. */
async function waitOf(consumed: Promise<RateLimiterRes>, counters: Counters): Promise<number> {
  try {
    await consumed;
    return 0;
  } catch (refusal) {
    if (counters.isRefusal(refusal)) return Math.max(1, Math.ceil(refusal.msBeforeNext / 1000));
    throw refusal;
  }
}
