import type { Endpoint } from './endpoint.js';

/**
 * Which endpoint serves a path and method. Patterns are literal segments, `:name` for one segment and `*name` for the
 * rest of the path (a model name may contain slashes); parameters are URL-decoded.
 */

export type Method = 'GET' | 'POST' | 'DELETE';
export type MethodEndpoints = Partial<Record<Method, Endpoint>>;

export interface RouteMatch {
  endpoints: MethodEndpoints;
  params: Readonly<Record<string, string>>;
}

/**
 * The endpoint for a request's method on a matched path: HEAD is served by the GET endpoint (RFC 9110 §9.3.2), and
 * node:http sends no body for it.
 */
export function endpointForMethod(endpoints: MethodEndpoints, method: string): Endpoint | undefined {
  if (method === 'HEAD') return endpoints.GET;
  return Object.hasOwn(endpoints, method) ? endpoints[method as Method] : undefined;
}

/** The `Allow` header of a path's 405: its methods, with HEAD wherever GET is. */
export function allowedMethods(endpoints: MethodEndpoints): string {
  return Object.keys(endpoints)
    .flatMap((method) => (method === 'GET' ? ['GET', 'HEAD'] : [method]))
    .join(', ');
}

interface PatternRoute {
  segments: readonly string[];
  endpoints: MethodEndpoints;
}

const noParams: Readonly<Record<string, string>> = Object.freeze({});

function decoded(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

export class RouteTable {
  /** Paths without parameters, found with one lookup (chat completions is one of them). */
  private readonly exact = new Map<string, RouteMatch>();
  private readonly patterns: PatternRoute[] = [];
  private readonly declared: Array<{ pattern: string; methods: Method[] }> = [];

  add(pattern: string, endpoints: MethodEndpoints): this {
    this.declared.push({ pattern, methods: Object.keys(endpoints) as Method[] });
    if (!pattern.includes(':') && !pattern.includes('*')) {
      this.exact.set(pattern, { endpoints, params: noParams });
    } else {
      this.patterns.push({ segments: pattern.split('/'), endpoints });
    }
    return this;
  }

  /** Every route as declared, for the docs test that keeps docs/api.md in step. */
  routes(): ReadonlyArray<{ pattern: string; methods: readonly Method[] }> {
    return this.declared;
  }

  match(path: string): RouteMatch | undefined {
    const exact = this.exact.get(path);
    if (exact) return exact;
    const parts = path.split('/');
    for (const route of this.patterns) {
      const params = matchSegments(route.segments, parts);
      if (params) return { endpoints: route.endpoints, params };
    }
    return undefined;
  }
}

function matchSegments(segments: readonly string[], parts: readonly string[]): Record<string, string> | undefined {
  const params: Record<string, string> = {};
  for (let index = 0; index < segments.length; index++) {
    const segment = segments[index] as string;
    const part = parts[index];
    if (segment.startsWith('*')) {
      const rest = parts.slice(index).join('/');
      if (rest === '') return undefined;
      params[segment.slice(1)] = decoded(rest);
      return params;
    }
    if (part === undefined) return undefined;
    if (segment.startsWith(':')) {
      if (part === '') return undefined;
      params[segment.slice(1)] = decoded(part);
    } else if (segment !== part) {
      return undefined;
    }
  }
  return segments.length === parts.length ? params : undefined;
}
