import type { Kysely } from 'kysely';
import { allowedModels, type ModelCatalog } from '../access/policy.js';
import { findKeyByHmac } from '../db/repositories/api-keys.js';
import type { Database } from '../db/schema.js';
import { ApiError, apiError } from '../errors/api-error.js';
import type { LimitSubject } from '../limits/limiter.js';
import { effectiveLimits, hasAnyLimit, type LimitSettings, parseStoredLimits } from '../limits/settings.js';
import type { Logger } from '../observability/logger.js';
import { hashKey, isWellFormedKey, maskPresentedKey } from './format.js';

/**
 * Where a data-plane request is authenticated: the Authorization header is parsed exactly (`Bearer`, one space, the
 * key), the key is HMAC-ed and looked up through a short-lived in-process cache, and the result is a Principal.
 * The cache is cleared whenever the access-change feed (access/change-feed.ts) reports a change anywhere (a key
 * revoked or rotated, an account's models changed), so a revocation takes effect on every node within a second.
 */

export interface Principal {
  accountId: string;
  accountName: string;
  keyId: string;
  keyName: string;
  /** The models this key may call, in catalog order (see access/policy.ts). */
  models: readonly string[];
  modelSet: ReadonlySet<string>;
  logBodies: boolean;
  /** Effective limits: what is stored on the account and the key, over the configured defaults. */
  limits: { account: LimitSettings; key: LimitSettings };
  /** The account and key as limiter subjects; empty when neither has any limit (the limiter is skipped). */
  limitSubjects: readonly LimitSubject[];
}

interface KnownKey {
  principal: Principal;
  expiresAt: number | null;
  revoked: boolean;
  accountDisabled: boolean;
}

interface CacheEntry {
  /** null: no such key (negative entries stop a flood of unknown keys from reaching the database). */
  key: KnownKey | null;
  loadedAt: number;
}

const bearerHelp =
  'You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).';

/** Parses the Authorization header exactly as the wire contract says; returns the presented token. */
export function parseAuthorizationHeader(authorization: string | undefined, hasXApiKey: boolean): string {
  if (authorization === undefined || authorization === '') {
    if (hasXApiKey) {
      throw apiError('invalid_authorization_header', `The x-api-key header is not accepted here. ${bearerHelp}`);
    }
    throw apiError('invalid_authorization_header', `You didn't provide an API key. ${bearerHelp}`);
  }
  const space = authorization.indexOf(' ');
  const scheme = space === -1 ? authorization : authorization.slice(0, space);
  if (scheme !== 'Bearer') {
    if (space === -1 && !/^[A-Za-z-]{1,20}$/.test(authorization)) {
      throw apiError('invalid_authorization_header', `The Authorization header has no scheme. ${bearerHelp}`);
    }
    const shownScheme = /^[A-Za-z-]{1,20}$/.test(scheme) ? `'${scheme}'` : 'given';
    throw apiError(
      'invalid_authorization_header',
      `The ${shownScheme} authorization scheme is not supported. ${bearerHelp}`,
    );
  }
  const token = authorization.slice(space + 1);
  if (token === '' || space === -1)
    throw apiError('invalid_authorization_header', `You didn't provide an API key. ${bearerHelp}`);
  if (/\s/.test(token)) {
    throw apiError(
      'invalid_authorization_header',
      'Malformed Authorization header: expected the word Bearer, exactly one space, then the key, with no other whitespace.',
    );
  }
  return token;
}

/** The refusal of a key that exists (revoked, expired, account disabled), carrying whose key it was. */
export class KeyRefusedError extends ApiError {
  constructor(
    readonly principal: Principal,
    refusal: ApiError,
  ) {
    super(refusal.errorCode, refusal.message, { headers: refusal.headers });
  }
}

export interface AuthenticatorOptions {
  db: Kysely<Database>;
  secret: Buffer;
  catalog: ModelCatalog;
  logger: Logger;
  cacheTtlMs: number;
  limitDefaults: { account: LimitSettings; key: LimitSettings };
  maxCacheEntries?: number;
}

export class Authenticator {
  private readonly cache = new Map<string, CacheEntry>();
  /**
   * Lookups under way, shared by the requests of one key that arrive meanwhile; tagged with the generation they began
   * in, since one begun before an invalidation read the key as it was and must not answer a request that came after.
   */
  private readonly pending = new Map<string, { generation: number; loading: Promise<KnownKey | null> }>();
  /** Bumped on every invalidation; a lookup that started before a bump must not repopulate the cache. */
  private generation = 0;
  private readonly maxEntries: number;

  constructor(private readonly options: AuthenticatorOptions) {
    this.maxEntries = options.maxCacheEntries ?? 100_000;
  }

  /** Forgets every cached key (after a local change, or when the feed says something changed elsewhere). */
  invalidateAll(): void {
    this.generation++;
    this.cache.clear();
  }

  /**
   * Authenticates a request's headers; throws the 401/403 ApiError that says exactly what was wrong. A key found in
   * the cache (nearly every request) is answered synchronously: no promise, no turn of the microtask queue.
   */
  authenticate(authorization: string | undefined, hasXApiKey: boolean): Principal | Promise<Principal> {
    const token = parseAuthorizationHeader(authorization, hasXApiKey);
    // The cache is keyed by the presented key itself: hashing it for a Map is far cheaper than a SHA-256 of it
    // (docs/performance.md#key-cache). The keys stay in this process's memory only, where every request's headers are
    // anyway (never logged, stored or sent; the database holds their HMAC). The shape and checksum of the key, and
    // the HMAC, are looked at only on a cache miss.
    const known = this.cached(token);
    if (known !== undefined) return this.principalOf(known, token);
    return this.lookup(token).then((loaded) => this.principalOf(loaded, token));
  }

  /** The principal of a usable key; otherwise the refusal that says why (the key shown masked). */
  private principalOf(known: KnownKey | null, token: string): Principal {
    if (known === null) {
      throw apiError(
        'invalid_api_key',
        `Incorrect API key provided: ${maskPresentedKey(token)}. No such key exists; create one in the console or with \`switchboard keys create\`.`,
      );
    }
    // A refused key that exists still identifies its account: the refusal goes into that account's request log
    // (someone still using a revoked key is worth seeing).
    if (known.revoked) {
      throw new KeyRefusedError(
        known.principal,
        apiError('invalid_api_key', `The API key ${maskPresentedKey(token)} has been revoked.`),
      );
    }
    if (known.expiresAt !== null && known.expiresAt <= Date.now()) {
      const expiredAt = new Date(known.expiresAt).toISOString();
      throw new KeyRefusedError(
        known.principal,
        apiError('invalid_api_key', `The API key ${maskPresentedKey(token)} expired at ${expiredAt}.`),
      );
    }
    if (known.accountDisabled) {
      throw new KeyRefusedError(
        known.principal,
        apiError(
          'account_disabled',
          `The account of API key ${maskPresentedKey(token)} is disabled; contact the operator.`,
        ),
      );
    }
    return known.principal;
  }

  /** A fresh cache entry; undefined when there is none (null is a cached "no such key"). */
  private cached(token: string): KnownKey | null | undefined {
    const entry = this.cache.get(token);
    return entry && Date.now() - entry.loadedAt < this.options.cacheTtlMs ? entry.key : undefined;
  }

  private async lookup(token: string): Promise<KnownKey | null> {
    if (!isWellFormedKey(token)) {
      throw apiError(
        'invalid_api_key',
        `Incorrect API key provided: ${maskPresentedKey(token)}. It is not a well-formed Switchboard key (sk-sb-…); check that it was copied whole.`,
      );
    }
    const now = Date.now();
    const generation = this.generation;
    const inFlight = this.pending.get(token);
    if (inFlight?.generation === generation) return inFlight.loading;
    const loading = this.load(hashKey(token, this.options.secret)).finally(() => {
      if (this.pending.get(token)?.loading === loading) this.pending.delete(token);
    });
    this.pending.set(token, { generation, loading });
    const key = await loading;
    if (generation === this.generation) this.remember(token, { key, loadedAt: now });
    return key;
  }

  private remember(token: string, entry: CacheEntry): void {
    if (this.cache.size >= this.maxEntries) {
      // Maps iterate in insertion order: drop the oldest tenth rather than one entry per insert.
      let toDrop = Math.ceil(this.maxEntries / 10);
      for (const oldest of this.cache.keys()) {
        this.cache.delete(oldest);
        if (--toDrop === 0) break;
      }
    }
    this.cache.set(token, entry);
  }

  private async load(hmac: string): Promise<KnownKey | null> {
    let row: Awaited<ReturnType<typeof findKeyByHmac>>;
    try {
      row = await findKeyByHmac(this.options.db, hmac);
    } catch (error) {
      throw apiError('service_unavailable', 'The key store is temporarily unavailable; retry shortly.', {
        headers: { 'retry-after': '1', 'retry-after-ms': '1000' },
        cause: error,
      });
    }
    if (!row) return null;
    const models = allowedModels(
      this.options.catalog,
      JSON.parse(row.account_models) as string[],
      row.key_models === null ? null : (JSON.parse(row.key_models) as string[]),
    );
    const limits = {
      account: effectiveLimits(parseStoredLimits(row.account_limits), this.options.limitDefaults.account),
      key: effectiveLimits(parseStoredLimits(row.key_limits), this.options.limitDefaults.key),
    };
    const limitSubjects: LimitSubject[] = [];
    if (hasAnyLimit(limits.account)) {
      limitSubjects.push({
        id: `account:${row.account_id}`,
        label: `account ${row.account_name}`,
        limits: limits.account,
      });
    }
    if (hasAnyLimit(limits.key))
      limitSubjects.push({ id: `key:${row.id}`, label: `key "${row.name}"`, limits: limits.key });
    return {
      principal: {
        accountId: row.account_id,
        accountName: row.account_name,
        keyId: row.id,
        keyName: row.name,
        models,
        modelSet: new Set(models),
        logBodies: row.account_log_bodies === 1,
        limits,
        limitSubjects,
      },
      expiresAt: row.expires_at === null ? null : Number(row.expires_at),
      revoked: row.revoked_at !== null,
      accountDisabled: row.account_disabled === 1,
    };
  }
}
