import type { Kysely } from 'kysely';
import * as initial from './0001-initial.js';
import * as consoleUsers from './0002-console-users.js';
import * as routingAttempts from './0003-routing-attempts.js';
import * as limits from './0004-limits.js';
import * as requestLogKeyIndex from './0005-request-log-key-index.js';
import * as servedLatency from './0006-served-latency.js';
import * as requestLogEndpoint from './0007-request-log-endpoint.js';
import * as responses from './0008-responses.js';
import * as accountSecurity from './0009-account-security.js';
import * as usageRollups from './0010-usage-rollups.js';
import * as requestLogProviderIndex from './0011-request-log-provider-index.js';
import * as usageDailySpendIndex from './0012-usage-daily-spend-index.js';
import * as narrowerUsageRollups from './0013-narrower-usage-rollups.js';
import * as responsesOneRow from './0014-responses-one-row.js';
import * as responseStates from './0015-response-states.js';
import * as foldedEmails from './0016-folded-emails.js';
import * as responseStreamLease from './0017-response-stream-lease.js';
import type { Dialect } from './dialect.js';

export interface MigrationModule {
  up(db: Kysely<unknown>, dialect: Dialect): Promise<void>;
  down(db: Kysely<unknown>, dialect: Dialect): Promise<void>;
}

/** Every migration, in order. Names are recorded in the database, so never rename or reorder them. */
export const migrations: Record<string, MigrationModule> = {
  '0001-initial': initial,
  '0002-console-users': consoleUsers,
  '0003-routing-attempts': routingAttempts,
  '0004-limits': limits,
  '0005-request-log-key-index': requestLogKeyIndex,
  '0006-served-latency': servedLatency,
  '0007-request-log-endpoint': requestLogEndpoint,
  '0008-responses': responses,
  '0009-account-security': accountSecurity,
  '0010-usage-rollups': usageRollups,
  '0011-request-log-provider-index': requestLogProviderIndex,
  '0012-usage-daily-spend-index': usageDailySpendIndex,
  '0013-narrower-usage-rollups': narrowerUsageRollups,
  '0014-responses-one-row': responsesOneRow,
  '0015-response-states': responseStates,
  '0016-folded-emails': foldedEmails,
  '0017-response-stream-lease': responseStreamLease,
};
