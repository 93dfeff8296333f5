import type { Redis } from 'ioredis';
import { type RateLimiterAbstract, RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
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
  private readonly perUser: RateLimiterAbstract;
  private readonly perAccount: RateLimiterAbstract;

  constructor(policy: InvitationLimitPolicy, redis?: { client: Redis; keyPrefix: string }) {
    const duration = Math.max(1, Math.ceil(policy.windowMs / 1000));
    const counter = (name: string, points: number): RateLimiterAbstract => {
      const memory = new RateLimiterMemory({ points, duration, keyPrefix: name });
      if (!redis) return memory;
      return new RateLimiterRedis({
        storeClient: redis.client,
        keyPrefix: `${redis.keyPrefix}${name}`,
        points,
        duration,
        rejectIfRedisNotReady: true,
        insuranceLimiter: memory,
      });
    };
    this.perUser = counter('invitations-by-user', policy.perUser);
    this.perAccount = counter('invitations-to-account', policy.perAccount);
  }

  async consume(accountId: string, userId: string): Promise<number> {
    // The user's count first: a user past their own limit then spends none of the account's, which other owners share.
    const userWait = await waitOf(this.perUser.consume(userId));
    if (userWait > 0) return userWait;
    const accountWait = await waitOf(this.perAccount.consume(accountId));
    if (accountWait > 0) await this.perUser.reward(userId).catch(() => undefined);
    return accountWait;
  }

  close(): void {}
}

/** 0 when the library let the points be consumed, else the seconds until they could be. */
async function waitOf(consumed: Promise<RateLimiterRes>): Promise<number> {
  try {
    await consumed;
    return 0;
  } catch (refusal) {
    if (refusal instanceof RateLimiterRes) return Math.max(1, Math.ceil(refusal.msBeforeNext / 1000));
    throw refusal;
  }
}
