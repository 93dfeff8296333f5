import { createPublicKey, type KeyObject, verify } from 'node:crypto';
import type { Logger } from '../observability/logger.js';

/**
 * The keys GitHub signs secret-scanning reports with. GitHub publishes them at
 * https://api.github.com/meta/public_keys/secret_scanning as { public_keys: [{ key_identifier, key (PEM), is_current }] }
 * and names the one it used in the Github-Public-Key-Identifier header; the Github-Public-Key-Signature header is a
 * base64 ECDSA (P-256, SHA-256, DER) signature of the raw body. Keys given in the configuration are used as they are;
 * the others are fetched, kept for a while, and fetched again (at most once a minute) when a report names an
 * identifier not seen yet.
 */

export interface GitHubKeysOptions {
  url: string;
  configured: ReadonlyArray<{ keyIdentifier: string; pem: string }>;
  cacheMs: number;
  logger: Logger;
}

/** The verification keys could not be had (GitHub unreachable): the report should be retried later. */
export class SigningKeysUnavailable extends Error {}

const refetchIntervalMs = 60_000;

export class GitHubSigningKeys {
  private readonly configured: Map<string, KeyObject>;
  private fetched = new Map<string, KeyObject>();
  private fetchedAt = 0;
  private lastAttemptAt = Number.NEGATIVE_INFINITY;
  private lastAttemptFailed = false;
  private inFlight: Promise<void> | undefined;

  constructor(private readonly options: GitHubKeysOptions) {
    this.configured = new Map(options.configured.map((entry) => [entry.keyIdentifier, createPublicKey(entry.pem)]));
  }

  /** The key with this identifier, or undefined when GitHub does not publish one. */
  async find(keyIdentifier: string): Promise<KeyObject | undefined> {
    const configured = this.configured.get(keyIdentifier);
    if (configured) return configured;
    const now = Date.now();
    const needed = now - this.fetchedAt >= this.options.cacheMs || !this.fetched.has(keyIdentifier);
    // Reports naming made-up identifiers must not make us fetch on every request.
    if (needed && now - this.lastAttemptAt >= refetchIntervalMs) {
      this.inFlight ??= this.fetchKeys().finally(() => {
        this.inFlight = undefined;
      });
      await this.inFlight;
    } else if (this.inFlight) await this.inFlight;
    // Keys fetched before still verify; with none at all, the report is refused with 503 so GitHub retries it.
    if (this.fetched.size === 0 && this.lastAttemptFailed) {
      throw new SigningKeysUnavailable('the verification keys could not be fetched');
    }
    return this.fetched.get(keyIdentifier);
  }

  private async fetchKeys(): Promise<void> {
    this.lastAttemptAt = Date.now();
    try {
      // Node's own fetch, loaded on first use: a rare request does not need undici's whole API kept in memory.
      const response = await fetch(this.options.url, {
        headers: { accept: 'application/json', 'user-agent': 'switchboard-secret-scanning' },
        signal: AbortSignal.timeout(5000),
      });
      const text = await response.text();
      if (response.status !== 200) throw new Error(`HTTP ${response.status}`);
      const document = JSON.parse(text) as { public_keys?: Array<{ key_identifier?: unknown; key?: unknown }> };
      const keys = new Map<string, KeyObject>();
      for (const entry of document.public_keys ?? []) {
        if (typeof entry.key_identifier !== 'string' || typeof entry.key !== 'string') continue;
        try {
          keys.set(entry.key_identifier, createPublicKey(entry.key));
        } catch {
          // A key we cannot read verifies nothing; the others still do.
        }
      }
      this.fetched = keys;
      this.fetchedAt = Date.now();
      this.lastAttemptFailed = false;
    } catch (error) {
      this.lastAttemptFailed = true;
      this.options.logger.warn(
        { err: error, url: this.options.url },
        'could not fetch the secret-scanning verification keys',
      );
    }
  }
}

/** Whether `signature` (base64 of a DER ECDSA signature) signs `payload` with `key`. */
export function isValidSignature(payload: Buffer, signature: string, key: KeyObject): boolean {
  try {
    return verify('sha256', payload, key, Buffer.from(signature, 'base64'));
  } catch {
    return false;
  }
}
