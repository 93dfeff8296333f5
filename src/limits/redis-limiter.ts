import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { ApiError } from '../errors/api-error.js';
import type { Logger } from '../observability/logger.js';
import {
  type Admission,
  type AdmissionRequest,
  admittedWithoutLimits,
  type Limiter,
  type LimitSubject,
  limitsUnavailableError,
  periodKeys,
  quotaError,
  rateLimitError,
  rateLimitHeaders,
  requestTooLargeForLimit,
  tighter,
  toMicroDollars,
  type WindowState,
} from './limiter.js';
import type { MemoryLimiter, SpendLoader } from './memory-limiter.js';
import { admitScript, renewLeaseScript, settleScript } from './redis-scripts.js';
import { type Settlement, SettlementQueue } from './redis-settlements.js';
import { hasAnyLimit, type LimitSettings } from './settings.js';

/**
 * Limits shared by every gateway node through Redis (atomic Lua scripts, see redis-scripts.ts). When Redis cannot
 * be reached, the configured fallback applies and is logged and counted: rate limits fall back to this node's
 * own counters by default; budgets fail closed (503) by default, because spending money unchecked is worse than
 * refusing a request for a moment.
 */

export type FallbackPolicy = 'local' | 'allow' | 'deny';

export interface RedisLimiterOptions {
  redis: Redis;
  keyPrefix: string;
  loadSpend: SpendLoader;
  /** This node's own counters, used when Redis is unreachable and the policy says `local`. */
  local: MemoryLimiter;
  onUnavailable: { rateLimits: FallbackPolicy; budgets: FallbackPolicy };
  logger: Logger;
  onFallback?: (kind: 'rate_limits' | 'budgets', policy: FallbackPolicy) => void;
  /** How long a concurrency slot survives a node that died without releasing it (renewed while its request runs). */
  leaseTtlMs?: number;
}

type RedisWithScripts = Redis & {
  switchboardAdmit(keys: number, ...args: Array<string | number>): Promise<Array<string | number>>;
  switchboardSettle(keys: number, ...args: Array<string | number>): Promise<number>;
  switchboardRenewLease(keys: number, ...args: Array<string | number>): Promise<number>;
};

const rateFields = ['requestsPerMinute', 'tokensPerMinute', 'concurrentRequests'] as const;
const budgetFields = ['dailyBudgetUsd', 'monthlyBudgetUsd'] as const;

function without(limits: LimitSettings, fields: ReadonlyArray<keyof LimitSettings>): LimitSettings {
  const result = { ...limits };
  for (const field of fields) result[field] = null;
  return result;
}

export class RedisLimiter implements Limiter {
  private readonly redis: RedisWithScripts;
  private readonly leaseTtlMs: number;
  /**
   * Concurrency leases of this node's requests still running (lease -> its sets): renewed every third of the TTL, so
   * a long stream keeps its slot while the slots of a node that died expire within one TTL.
   */
  private readonly liveLeases = new Map<string, string[]>();
  private readonly renewal: NodeJS.Timeout;
  private readonly settlements: SettlementQueue;

  constructor(private readonly options: RedisLimiterOptions) {
    this.redis = options.redis as RedisWithScripts;
    this.redis.defineCommand('switchboardAdmit', { lua: admitScript });
    this.redis.defineCommand('switchboardSettle', { lua: settleScript });
    this.redis.defineCommand('switchboardRenewLease', { lua: renewLeaseScript });
    this.leaseTtlMs = options.leaseTtlMs ?? 30_000;
    this.settlements = new SettlementQueue(this.redis, options.logger);
    this.renewal = setInterval(
      () => {
        this.renewLeases();
        this.settlements.retry();
      },
      Math.max(250, Math.floor(this.leaseTtlMs / 3)),
    );
    this.renewal.unref();
  }

  private renewLeases(): void {
    for (const [lease, keys] of this.liveLeases) {
      this.redis.switchboardRenewLease(keys.length, ...keys, lease, this.leaseTtlMs).catch((error: unknown) => {
        // Redis unreachable: the next renewal tries again; a lease that expires meanwhile frees its slot early.
        this.options.logger.debug({ err: error }, 'could not renew a concurrency lease');
      });
    }
  }

  /** The reservations of one partition not settled yet (see redis-scripts.ts): after every subject's keys. */
  private reservationsKey(partition: string): string {
    return `${this.options.keyPrefix}{${partition}}:reservations`;
  }

  private keysFor(partition: string, subject: LimitSubject, day: string, month: string): string[] {
    // The hash tag {partition} keeps all keys of one request in one slot (Redis Cluster runs a script on one slot).
    const base = `${this.options.keyPrefix}{${partition}}:${subject.id}`;
    return [
      `${base}:requests`,
      `${base}:tokens`,
      `${base}:leases`,
      `${base}:spend:day:${day}`,
      `${base}:spend:month:${month}`,
    ];
  }

  async admit(request: AdmissionRequest): Promise<Admission> {
    const limited = request.subjects.filter((subject) => hasAnyLimit(subject.limits));
    if (limited.length === 0) return admittedWithoutLimits;
    try {
      return await this.admitShared({ ...request, subjects: limited });
    } catch (error) {
      if (error instanceof ApiError) throw error;
      return this.admitWithoutRedis({ ...request, subjects: limited }, error);
    }
  }

  private async admitShared(request: AdmissionRequest): Promise<Admission> {
    const periods = periodKeys(Date.now());
    const tokens = Math.max(0, Math.round(request.estimatedTokens));
    const cost = toMicroDollars(request.estimatedCostUsd);
    const lease = randomUUID();
    const keys: string[] = [];
    const args: Array<string | number> = [request.subjects.length, tokens, cost, lease, this.leaseTtlMs];
    for (const subject of request.subjects) {
      keys.push(...this.keysFor(request.partition, subject, periods.day, periods.month));
      const limits = subject.limits;
      args.push(
        limits.requestsPerMinute ?? 0,
        limits.tokensPerMinute ?? 0,
        limits.concurrentRequests ?? 0,
        limits.dailyBudgetUsd === null ? -1 : toMicroDollars(limits.dailyBudgetUsd),
        limits.monthlyBudgetUsd === null ? -1 : toMicroDollars(limits.monthlyBudgetUsd),
        0,
        0,
      );
    }
    keys.push(this.reservationsKey(request.partition));
    // A budget counter missing in Redis (new period, or Redis restarted) is seeded from the request log once.
    for (let attempt = 0; attempt < 4; attempt++) {
      let result: Array<string | number>;
      // Without a connection the command is refused at once, unsent (no offline queue): nothing to take back then.
      const sent = this.redis.status === 'ready';
      try {
        result = await this.redis.switchboardAdmit(keys.length, ...keys, ...args);
      } catch (error) {
        // The script may have run although its answer did not come in time (a frozen or slow Redis): the admission is
        // taken back, since this request is refused or admitted without Redis now (a no-op when it never ran).
        if (sent) void this.settlements.send(lease, this.settlement(request, periods, lease, -tokens, -cost, 0, true));
        throw error;
      }
      const outcome = result[0];
      if (outcome === 'load') {
        const subject = request.subjects[Number(result[1])] as LimitSubject;
        const period = result[2] === 'day' ? 'day' : 'month';
        const start =
          period === 'day'
            ? periods.dayEnd.getTime() - 86_400_000
            : Date.UTC(periods.monthEnd.getUTCFullYear(), periods.monthEnd.getUTCMonth() - 1, 1);
        const end = period === 'day' ? periods.dayEnd.getTime() : periods.monthEnd.getTime();
        const spent = toMicroDollars(await this.options.loadSpend(subject, period, start));
        const key = this.keysFor(request.partition, subject, periods.day, periods.month)[
          period === 'day' ? 3 : 4
        ] as string;
        await this.redis.set(key, spent, 'PX', end - Date.now() + 86_400_000, 'NX');
        continue;
      }
      if (outcome === 'rejected') throw this.rejection(request, result, periods);
      return this.admission(request, result, lease, tokens, cost, periods);
    }
    throw new Error('budget counters could not be seeded');
  }

  private rejection(
    request: AdmissionRequest,
    result: Array<string | number>,
    periods: ReturnType<typeof periodKeys>,
  ): ApiError {
    const subject = request.subjects[Number(result[1])] as LimitSubject;
    const kind = String(result[2]);
    const limit = Number(result[3]);
    const retryAfterMs = Number(result[4]);
    const used = Number(result[5]);
    const tokens = Math.round(request.estimatedTokens);
    switch (kind) {
      case 'requests':
        return rateLimitError(
          'requests',
          subject,
          limit,
          retryAfterMs,
          rateLimitHeaders({ limit, remaining: limit - used, resetMs: 60_000 }, undefined),
        );
      case 'tokens':
        return rateLimitError(
          'tokens',
          subject,
          limit,
          retryAfterMs,
          rateLimitHeaders(undefined, { limit, remaining: limit - used, resetMs: 60_000 }),
          tokens,
        );
      case 'tokens_too_large':
        return requestTooLargeForLimit(
          subject,
          limit,
          tokens,
          rateLimitHeaders(undefined, { limit, remaining: limit - used, resetMs: 60_000 }),
        );
      case 'concurrency':
        return rateLimitError('concurrency', subject, limit, retryAfterMs, {});
      case 'daily_budget':
        return quotaError('daily_budget', subject, subject.limits.dailyBudgetUsd ?? 0, periods.dayEnd);
      default:
        return quotaError('monthly_budget', subject, subject.limits.monthlyBudgetUsd ?? 0, periods.monthEnd);
    }
  }

  private admission(
    request: AdmissionRequest,
    result: Array<string | number>,
    lease: string,
    tokens: number,
    cost: number,
    periods: ReturnType<typeof periodKeys>,
  ): Admission {
    const second = Number(result[1]);
    const nowMs = Number(result[2]);
    // Everything counted now leaves the window when this second does.
    const resetMs = (second + 60) * 1000 - nowMs;
    let requestsState: WindowState | undefined;
    let tokensState: WindowState | undefined;
    request.subjects.forEach((subject, index) => {
      const requestsUsed = Number(result[3 + index * 2]);
      const tokensUsed = Number(result[4 + index * 2]);
      const { requestsPerMinute, tokensPerMinute } = subject.limits;
      if (requestsPerMinute !== null)
        requestsState = tighter(requestsState, {
          limit: requestsPerMinute,
          remaining: requestsPerMinute - requestsUsed,
          resetMs,
        });
      if (tokensPerMinute !== null)
        tokensState = tighter(tokensState, {
          limit: tokensPerMinute,
          remaining: tokensPerMinute - tokensUsed,
          resetMs,
        });
    });
    const leaseKeys = request.subjects
      .filter((subject) => subject.limits.concurrentRequests !== null)
      .map((subject) => this.keysFor(request.partition, subject, periods.day, periods.month)[2] as string);
    if (leaseKeys.length > 0) this.liveLeases.set(lease, leaseKeys);
    let settled = false;
    return {
      headers: rateLimitHeaders(requestsState, tokensState),
      shared: true,
      settle: (actual) => {
        if (settled) return;
        settled = true;
        this.liveLeases.delete(lease);
        const tokenDelta = Math.max(0, Math.round(actual.tokens)) - tokens;
        const actualCost = toMicroDollars(actual.costUsd);
        return this.settlements.send(
          lease,
          this.settlement(request, periods, lease, tokenDelta, actualCost - cost, actualCost, false),
        );
      },
    };
  }

  /** The settle script's keys and arguments for one request (`cancel`: take its admission back whole). */
  private settlement(
    request: AdmissionRequest,
    periods: ReturnType<typeof periodKeys>,
    lease: string,
    tokenDelta: number,
    costDelta: number,
    actualCost: number,
    cancel: boolean,
  ): Settlement {
    const keys: string[] = [];
    const flags: string[] = [];
    for (const subject of request.subjects) {
      keys.push(...this.keysFor(request.partition, subject, periods.day, periods.month));
      const limits = subject.limits;
      flags.push(
        [
          limits.requestsPerMinute,
          limits.tokensPerMinute,
          limits.concurrentRequests,
          limits.dailyBudgetUsd,
          limits.monthlyBudgetUsd,
        ]
          .map((limit) => (limit === null ? '0' : '1'))
          .join(''),
      );
    }
    keys.push(this.reservationsKey(request.partition));
    return {
      keys,
      args: [request.subjects.length, tokenDelta, costDelta, lease, cancel ? '1' : '0', ...flags],
      forgottenCost: actualCost,
    };
  }

  private async admitWithoutRedis(request: AdmissionRequest, error: unknown): Promise<Admission> {
    const { rateLimits, budgets } = this.options.onUnavailable;
    const hasRate = request.subjects.some((subject) => rateFields.some((field) => subject.limits[field] !== null));
    const hasBudget = request.subjects.some((subject) => budgetFields.some((field) => subject.limits[field] !== null));
    this.options.logger.warn(
      { err: error, rateLimits, budgets },
      'Redis unreachable for limits; applying the configured fallback',
    );
    if (hasBudget) this.options.onFallback?.('budgets', budgets);
    if (hasRate) this.options.onFallback?.('rate_limits', rateLimits);
    if ((hasBudget && budgets === 'deny') || (hasRate && rateLimits === 'deny')) throw limitsUnavailableError();
    const dropped: Array<keyof LimitSettings> = [];
    if (rateLimits === 'allow') dropped.push(...rateFields);
    if (budgets === 'allow') dropped.push(...budgetFields);
    return this.options.local.admit({
      ...request,
      subjects: request.subjects.map((subject) => ({ ...subject, limits: without(subject.limits, dropped) })),
    });
  }

  async close(): Promise<void> {
    clearInterval(this.renewal);
    this.settlements.close();
    await this.options.local.close();
  }
}
