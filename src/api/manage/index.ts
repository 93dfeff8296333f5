import type { FastifyInstance } from 'fastify';
import { accountRoutes } from './accounts.js';
import { keyRoutes } from './keys.js';
import { logRoutes } from './logs.js';
import { memberRoutes } from './members.js';
import { modelRoutes } from './models.js';
import { buildOpenApiDocument } from './openapi.js';
import { type AnyRoute, registerRoutes } from './route.js';
import { secretScanningRoutes } from './secret-scanning.js';
import type { ManagementServices } from './services.js';
import { sessionRoutes } from './session.js';
import { tokenRoutes } from './tokens.js';
import { usageRoutes } from './usage.js';
import { userRoutes } from './users.js';

/** The management API under /api: every route, one table. */
export const managementRoutes: readonly AnyRoute[] = [
  ...sessionRoutes,
  ...tokenRoutes,
  ...accountRoutes,
  ...memberRoutes,
  ...keyRoutes,
  ...logRoutes,
  ...usageRoutes,
  ...modelRoutes,
  ...userRoutes,
  ...secretScanningRoutes,
];

export function registerManagementApi(app: FastifyInstance, services: ManagementServices, version: string): void {
  registerRoutes(app, managementRoutes, services);
  const document = JSON.stringify(buildOpenApiDocument(managementRoutes, version));
  app.get('/api/openapi.json', async (_request, reply) => {
    return reply.header('content-type', 'application/json').header('cache-control', 'no-cache').send(document);
  });
}
