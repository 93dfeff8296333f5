import type { ModelCatalog } from '../../access/policy.js';
import type { Config } from '../../config/schema.js';
import type { DatabaseHandle } from '../../db/connect.js';
import type { Logger } from '../../observability/logger.js';
import type { GitHubSigningKeys } from '../../secret-scanning/github-keys.js';
import type { InvitationLimit } from '../../users/invitation-limit.js';
import type { SignInThrottle } from '../../users/sign-in-throttle.js';

/** Everything the management API needs, built once in main.ts and passed down. */
export interface ManagementServices {
  config: Config;
  database: DatabaseHandle;
  catalog: ModelCatalog;
  /** The server secret (the same one keys are HMAC-ed with); here it derives CSRF tokens. */
  secret: Buffer;
  /** Slows password guessing per (client address, user); shared through Redis when Redis is configured. */
  signInThrottle: SignInThrottle;
  /** Invitations per account and per inviting user in a window; shared like the sign-in throttle. */
  invitationLimit: InvitationLimit;
  logger: Logger;
  /** Called after a change to keys or account access, so this process's key cache drops it at once. */
  onAccessChanged(): void;
  /**
   * A password hash verified when a sign-in names an unknown user, so that "no such user" takes as long as "wrong
   * password" and response times do not reveal which addresses have accounts.
   */
  decoyPasswordHash: Promise<string>;
  /** GitHub's secret-scanning signing keys; undefined when secret_scanning.enabled is false. */
  secretScanningKeys: GitHubSigningKeys | undefined;
}
