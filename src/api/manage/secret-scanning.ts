import { createHash } from 'node:crypto';
import { z } from 'zod';
import { apiError, routeNotFound } from '../../errors/api-error.js';
import { isWellFormedKey } from '../../keys/format.js';
import { findKeyByValue, revokeKey } from '../../keys/service.js';
import { isValidSignature, SigningKeysUnavailable } from '../../secret-scanning/github-keys.js';
import { defineRoute } from './route.js';

/**
 * The endpoint of GitHub's secret-scanning partner program: when GitHub finds text matching the Switchboard key
 * format in a public place, it POSTs the matches here, signed. Each match that is one of this gateway's keys is
 * revoked at once (on every node) and reported back as a true positive; a match whose checksum fails is a false
 * positive. A well-formed key that is not ours is left out of the answer: it may be another Switchboard
 * installation's. The response names tokens only by their SHA-256, as GitHub accepts, never the token.
 */

const alertSchema = z.object({
  token: z.string().max(1000),
  type: z.string().max(200),
  url: z.string().max(4000).optional(),
  source: z.string().max(100).optional(),
});

const feedbackSchema = z.array(
  z.object({
    token_hash: z.string().describe('SHA-256 of the token, hex'),
    token_type: z.string(),
    label: z.enum(['true_positive', 'false_positive']),
  }),
);

const headerValue = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);

export const secretScanningRoutes = [
  defineRoute({
    method: 'POST',
    path: '/api/secret-scanning/github',
    tag: 'Keys',
    summary: "GitHub's secret-scanning partner endpoint: leaked keys are revoked at once",
    description:
      'Enabled by secret_scanning.enabled. GitHub signs the body: Github-Public-Key-Identifier names the key ' +
      '(fetched from secret_scanning.public_keys_url or given in secret_scanning.public_keys), ' +
      'Github-Public-Key-Signature is the base64 ECDSA P-256 SHA-256 signature of the raw body. Unsigned or wrongly ' +
      'signed reports get 401; 503 when the verification keys cannot be fetched (GitHub retries).',
    auth: 'public',
    access: 'anyone',
    rawBody: true,
    body: z.array(alertSchema).max(10_000),
    response: feedbackSchema,
    handle: async ({ body, rawBody, request, services }) => {
      const keys = services.secretScanningKeys;
      if (!keys) throw routeNotFound('POST', '/api/secret-scanning/github');
      const keyIdentifier = headerValue(request.headers['github-public-key-identifier']);
      const signature = headerValue(request.headers['github-public-key-signature']);
      if (!keyIdentifier || !signature || !rawBody) {
        throw apiError(
          'signature_missing',
          'Missing Github-Public-Key-Identifier or Github-Public-Key-Signature header.',
        );
      }
      let key: Awaited<ReturnType<typeof keys.find>>;
      try {
        key = await keys.find(keyIdentifier);
      } catch (error) {
        if (!(error instanceof SigningKeysUnavailable)) throw error;
        throw apiError(
          'verification_keys_unavailable',
          'The signature cannot be checked now: the verification keys could not be fetched.',
          { headers: { 'retry-after': '60' } },
        );
      }
      if (!key || !isValidSignature(rawBody, signature, key)) {
        throw apiError('signature_invalid', 'The signature does not verify with the named key.');
      }
      const db = services.database.db;
      const feedback: z.infer<typeof feedbackSchema> = [];
      let revokedAny = false;
      for (const alert of body) {
        const tokenHash = createHash('sha256').update(alert.token).digest('hex');
        const value = alert.token.trim();
        if (!isWellFormedKey(value)) {
          feedback.push({ token_hash: tokenHash, token_type: alert.type, label: 'false_positive' });
          continue;
        }
        const row = await findKeyByValue(db, services.secret, value);
        if (!row) continue;
        const wasActive = row.revoked_at === null;
        if (wasActive) {
          await revokeKey(db, row.id);
          revokedAny = true;
        }
        services.logger.warn(
          { keyId: row.id, account: row.account_id, url: alert.url, source: alert.source, wasActive },
          wasActive
            ? 'GitHub secret scanning found an API key in public: revoked it'
            : 'GitHub secret scanning found an API key in public (already revoked)',
        );
        feedback.push({ token_hash: tokenHash, token_type: alert.type, label: 'true_positive' });
      }
      if (revokedAny) services.onAccessChanged();
      return feedback;
    },
  }),
];
