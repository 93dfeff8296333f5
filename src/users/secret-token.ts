import { createHash, randomBytes } from 'node:crypto';

/**
 * Bearer secrets of the console (session cookies, management tokens, invitation links): 256 random bits with a
 * recognisable prefix. Only their SHA-256 is stored; a plain hash suffices because the secrets are random, not
 * chosen by people, so there is nothing to brute-force.
 */

export type TokenKind = 'session' | 'management' | 'invitation';

const prefixes: Record<TokenKind, string> = { session: 'sbs_', management: 'sbm_', invitation: 'sbi_' };

export function generateSecretToken(kind: TokenKind): string {
  return prefixes[kind] + randomBytes(32).toString('base64url');
}

/** True when the text has the shape of a token of this kind (checked before any database lookup). */
export function looksLikeSecretToken(kind: TokenKind, text: string): boolean {
  return (
    text.length === prefixes[kind].length + 43 && text.startsWith(prefixes[kind]) && /^[\w-]+$/.test(text.slice(4))
  );
}

export function hashSecretToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** What lists show: the prefix and the last four characters. */
export function displaySecretToken(token: string): string {
  return `${token.slice(0, 4)}…${token.slice(-4)}`;
}
