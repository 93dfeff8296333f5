import type { ModelCatalog } from '../../access/policy.js';
import type { Config } from '../../config/schema.js';
import type { Authenticator } from '../../keys/authenticate.js';
import type { Limiter } from '../../limits/limiter.js';
import type { Logger } from '../../observability/logger.js';
import type { Metrics } from '../../observability/metrics.js';
import type { RequestLogWriter } from '../../request-log/writer.js';
import type { Dispatcher } from '../../routing/dispatch.js';
import type { Router } from '../../routing/router.js';
import type { ResponseStore } from './responses/response-store.js';

/** Everything the data plane needs, built once in main.ts and passed down. */
export interface DataPlaneServices {
  config: Config;
  catalog: ModelCatalog;
  authenticator: Authenticator;
  router: Router;
  dispatcher: Dispatcher;
  logWriter: RequestLogWriter;
  limiter: Limiter;
  metrics: Metrics;
  logger: Logger;
  /** Stored /v1/responses state (previous_response_id, retrieve, delete, input items). */
  responses: ResponseStore;
}
