import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Logger } from '../observability/logger.js';
import {
  type FailureRecord,
  type MemorySignInThrottle,
  remainingWaitMs,
  type SignInThrottle,
  type SignInThrottlePolicy,
  subjectsOf,
} from './sign-in-throttle.js';

/**
 * The sign-in throttle shared by every node through Redis: a guesser gets the same budget however many nodes the
 * load balancer spreads their attempts over. Each subject is a Redis hash (failures, last failure time) that expires
 * forgetAfterMs after its last failure; keys hold a SHA-256 of the subject, so no e-mail or client address is stored in
 * Redis. This node's own throttle records every failure too and answers whenever Redis cannot.
 */
export class RedisSignInThrottle implements SignInThrottle {
  constructor(
    private readonly options: {
      redis: Redis;
      keyPrefix: string;
      policy: SignInThrottlePolicy;
      local: MemorySignInThrottle;
      logger: Logger;
    },
  ) {}

  private redisKey(subject: string): string {
    return `${this.options.keyPrefix}sign-in:${createHash('sha256').update(subject).digest('hex')}`;
  }

  private unavailable(error: unknown): void {
    this.options.logger.warn({ err: error }, 'Redis unreachable: sign-in attempts are throttled by this node alone');
  }

  async retryAfterSeconds(email: string, clientAddress: string): Promise<number> {
    const subjects = subjectsOf(email, clientAddress, this.options.policy);
    try {
      const pipeline = this.options.redis.pipeline();
      for (const subject of subjects) pipeline.hmget(this.redisKey(subject.key), 'failures', 'last');
      const results = (await pipeline.exec()) ?? [];
      const now = Date.now();
      let wait = 0;
      subjects.forEach((subject, index) => {
        const [error, values] = results[index] ?? [new Error('no reply'), null];
        if (error) throw error;
        const [failures, last] = (values as Array<string | null>) ?? [];
        const record: FailureRecord | undefined =
          failures && last ? { failures: Number(failures), lastFailureAt: Number(last) } : undefined;
        wait = Math.max(wait, remainingWaitMs(record, subject.free, this.options.policy, now));
      });
      // A failure this node recorded while Redis was away still counts.
      return Math.ceil(Math.max(wait, this.options.local.waitMs(email, clientAddress)) / 1000);
    } catch (error) {
      this.unavailable(error);
      return this.options.local.retryAfterSeconds(email, clientAddress);
    }
  }

  async recordFailure(email: string, clientAddress: string): Promise<void> {
    await this.options.local.recordFailure(email, clientAddress);
    try {
      const transaction = this.options.redis.multi();
      const now = Date.now();
      for (const subject of subjectsOf(email, clientAddress, this.options.policy)) {
        const key = this.redisKey(subject.key);
        transaction.hincrby(key, 'failures', 1).hset(key, 'last', now).pexpire(key, this.options.policy.forgetAfterMs);
      }
      await transaction.exec();
    } catch (error) {
      this.unavailable(error);
    }
  }

  async recordSuccess(email: string, clientAddress: string): Promise<void> {
    await this.options.local.recordSuccess(email, clientAddress);
    const [pair] = subjectsOf(email, clientAddress, this.options.policy);
    if (!pair) return;
    try {
      await this.options.redis.del(this.redisKey(pair.key));
    } catch (error) {
      this.unavailable(error);
    }
  }

  close(): void {
    this.options.local.close();
  }
}
