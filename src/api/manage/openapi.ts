import { z } from 'zod';
import { sessionCookieName } from './cookies.js';
import type { AnyRoute } from './route.js';

/**
 * The OpenAPI 3.1 document of /api, generated from the route declarations and their zod schemas (JSON Schema
 * 2020-12 is OpenAPI 3.1's schema language), so it lists exactly the routes that exist with exactly the inputs
 * they validate.
 */

type JsonSchema = Record<string, unknown>;

function toSchema(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, {
    target: 'draft-2020-12',
    io,
    unrepresentable: 'any',
  }) as JsonSchema;
  return rest;
}

/** The fields of an object schema (path or query parameters). */
function fieldsOf(schema: z.ZodType | undefined): Array<[string, z.ZodType]> {
  const shape = (schema as { shape?: Record<string, z.ZodType> } | undefined)?.shape;
  return shape ? Object.entries(shape) : [];
}

function parameters(route: AnyRoute): JsonSchema[] {
  const path = fieldsOf(route.params).map(([name, schema]) => ({
    name,
    in: 'path',
    required: true,
    schema: toSchema(schema, 'input'),
  }));
  const query = fieldsOf(route.query).map(([name, schema]) => {
    const converted = toSchema(schema, 'input');
    return {
      name,
      in: 'query',
      required: !schema.safeParse(undefined).success,
      ...(typeof converted.description === 'string' ? { description: converted.description } : {}),
      schema: converted,
    };
  });
  return [...path, ...query];
}

const errorResponse = { $ref: '#/components/responses/Error' };

function operation(route: AnyRoute): JsonSchema {
  const status = route.status ?? 200;
  const security =
    route.auth === 'public'
      ? []
      : route.auth === 'session'
        ? [{ sessionCookie: [] }]
        : [{ sessionCookie: [] }, { managementToken: [] }];
  const who = {
    anyone: 'Anyone.',
    'signed-in': 'Any signed-in user.',
    'account-member': 'Members (owner or member) of the account, and admins.',
    'account-owner': 'Owners of the account, and admins.',
    admin: 'Admins only.',
  }[route.access];
  return {
    operationId: `${route.method.toLowerCase()}${route.path
      .replace(/^\/api/, '')
      .split('/')
      .map((part) => (part.startsWith(':') ? `By${part.slice(1, 2).toUpperCase()}${part.slice(2)}` : part))
      .map((part) => part.replace(/(^|[-_])(\w)/g, (_match, _separator, letter: string) => letter.toUpperCase()))
      .join('')}`,
    tags: [route.tag],
    summary: route.summary,
    description: [route.description, `Who may call it: ${who}`].filter(Boolean).join('\n\n'),
    security,
    parameters: parameters(route),
    ...(route.body
      ? { requestBody: { required: true, content: { 'application/json': { schema: toSchema(route.body, 'input') } } } }
      : {}),
    responses: {
      [String(status)]:
        status === 204
          ? { description: 'Done; no body.' }
          : route.streams
            ? {
                description: 'Success: a download, streamed (never held in memory whole).',
                content: Object.fromEntries(
                  Object.entries(route.streams).map(([mediaType, description]) => [
                    mediaType,
                    { schema: { type: 'string', description } },
                  ]),
                ),
              }
            : {
                description: 'Success.',
                content: { 'application/json': { schema: route.response ? toSchema(route.response, 'output') : {} } },
              },
      '4XX': errorResponse,
      '5XX': errorResponse,
    },
  };
}

export function buildOpenApiDocument(routes: readonly AnyRoute[], version: string): JsonSchema {
  const paths: Record<string, Record<string, JsonSchema>> = {};
  for (const route of routes) {
    const path = route.path.replace(/:(\w+)/g, '{$1}');
    paths[path] ??= {};
    (paths[path] as Record<string, JsonSchema>)[route.method.toLowerCase()] = operation(route);
  }
  paths['/api/openapi.json'] = {
    get: {
      operationId: 'getOpenapiJson',
      tags: ['Meta'],
      summary: 'This document',
      security: [],
      responses: { '200': { description: 'The OpenAPI 3.1 document.' } },
    },
  };
  return {
    openapi: '3.1.0',
    info: {
      title: 'Switchboard management API',
      version,
      description:
        'The API behind the web console, also for scripts. Authenticate with a management token ' +
        '(`Authorization: Bearer sbm_…`, created in the console under Settings) or, from the console, the session ' +
        `cookie \`${sessionCookieName}\`; with the cookie, POST/PATCH/DELETE requests must also send the ` +
        '`x-csrf-token` header from `GET /api/session`. Errors use the OpenAI body ' +
        '`{"error":{"message","type","param","code"}}`. An account you cannot access is reported as not found.',
    },
    servers: [{ url: '/' }],
    paths,
    components: {
      securitySchemes: {
        managementToken: { type: 'http', scheme: 'bearer', description: 'A management token (sbm_…).' },
        sessionCookie: { type: 'apiKey', in: 'cookie', name: sessionCookieName },
      },
      responses: {
        Error: {
          description: 'An error, in the OpenAI error format.',
          content: {
            'application/json': {
              schema: {
                type: 'object',
                required: ['error'],
                properties: {
                  error: {
                    type: 'object',
                    required: ['message', 'type', 'param', 'code'],
                    properties: {
                      message: { type: 'string' },
                      type: { type: 'string' },
                      param: { type: ['string', 'null'] },
                      code: { type: ['string', 'null'] },
                    },
                  },
                },
              },
            },
          },
        },
      },
    },
  };
}
