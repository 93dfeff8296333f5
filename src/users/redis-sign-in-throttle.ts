import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Logger } from '../observability/logger.js';
import {
  type MemorySignInThrottle,
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

  async beginAttempt(email: string, clientAddress: string): Promise<number> {
    // A failure this node recorded while Redis was away still counts.
    const localWait = this.options.local.waitMs(email, clientAddress);
    if (localWait > 0) return Math.ceil(localWait / 1000);
    const { policy } = this.options;
    const [pair, client] = subjectsOf(email, clientAddress, policy);
    if (!pair || !client) return 0;
    try {
      const waitMs = Number(
        await this.options.redis.eval(
          beginAttemptScript,
          2,
          this.redisKey(pair.key),
          this.redisKey(client.key),
          Date.now(),
          pair.free,
          client.free,
          policy.maxDelayMs,
          policy.forgetAfterMs,
        ),
      );
      if (waitMs > 0) return Math.ceil(waitMs / 1000);
      this.options.local.countFailure(email, clientAddress);
      return 0;
    } catch (error) {
      this.unavailable(error);
      return this.options.local.beginAttempt(email, clientAddress);
    }
  }

  async attemptSucceeded(email: string, clientAddress: string): Promise<void> {
    await this.options.local.attemptSucceeded(email, clientAddress);
    const [pair, client] = subjectsOf(email, clientAddress, this.options.policy);
    if (!pair || !client) return;
    try {
      await this.options.redis.eval(attemptSucceededScript, 2, this.redisKey(pair.key), this.redisKey(client.key));
    } catch (error) {
      this.unavailable(error);
    }
  }

  async withdrawAttempt(email: string, clientAddress: string): Promise<void> {
    await this.options.local.withdrawAttempt(email, clientAddress);
    const [pair, client] = subjectsOf(email, clientAddress, this.options.policy);
    if (!pair || !client) return;
    try {
      await this.options.redis.eval(withdrawAttemptScript, 2, this.redisKey(pair.key), this.redisKey(client.key));
    } catch (error) {
      this.unavailable(error);
    }
  }

  close(): void {
    this.options.local.close();
  }
}

/**
 * KEYS: the (client, user) and the client subject; ARGV: now, their free failures, the longest delay, the window.
 * The wait still due (remainingWaitMs, in Lua), or 0 after counting the attempt against both: one script, so attempts
 * sent at once to any node are counted one after the other.
 */
const beginAttemptScript = `
local now = tonumber(ARGV[1])
local maxDelay = tonumber(ARGV[4])
local forget = tonumber(ARGV[5])
local wait = 0
for i = 1, 2 do
  local free = tonumber(ARGV[i + 1])
  local values = redis.call('HMGET', KEYS[i], 'failures', 'last')
  local failures = tonumber(values[1])
  local last = tonumber(values[2])
  if failures and last and failures >= free and now - last < forget then
    local delay = math.min(1000 * 2 ^ math.min(failures - free, 30), maxDelay)
    wait = math.max(wait, last + delay - now)
  end
end
if wait > 0 then return math.ceil(wait) end
for i = 1, 2 do
  redis.call('HINCRBY', KEYS[i], 'failures', 1)
  redis.call('HSET', KEYS[i], 'last', now)
  redis.call('PEXPIRE', KEYS[i], forget)
end
return 0
`;

/** KEYS: the (client, user) and the client subject. Clears the first; uncounts the attempt from the second. */
const attemptSucceededScript = `
redis.call('DEL', KEYS[1])
local failures = tonumber(redis.call('HGET', KEYS[2], 'failures'))
if failures and failures > 0 then redis.call('HINCRBY', KEYS[2], 'failures', -1) end
return 0
`;

/** KEYS: the (client, user) and the client subject. Uncounts the attempt from both. */
const withdrawAttemptScript = `
for i = 1, 2 do
  local failures = tonumber(redis.call('HGET', KEYS[i], 'failures'))
  if failures and failures > 0 then redis.call('HINCRBY', KEYS[i], 'failures', -1) end
end
return 0
`;
