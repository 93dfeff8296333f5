import { describe, expect, it } from 'vitest';
import { buildModelCatalog } from '../../src/access/policy.js';
import { createRouteTable } from '../../src/api/v1/endpoints.js';
import { codeSpans, readDoc } from '../support/markdown.js';

/**
 * docs/api.md against the data plane's route table (src/api/v1/endpoints.ts): every routed method and path is
 * documented as `METHOD /v1/…`, every one documented is routed, and every bare `/v1/…` path the page names is one.
 */

const spans = codeSpans(readDoc('docs/api.md'));
/** `/v1/models/{id}` for the table's `/v1/models/*id` and `/v1/responses/:id`. */
const asDocumented = (pattern: string) => pattern.replace(/[:*](\w+)/g, '{$1}');

const routed = createRouteTable(buildModelCatalog([]), 0)
  .routes()
  .flatMap((route) => route.methods.map((method) => `${method} ${asDocumented(route.pattern)}`));
const routedPaths = new Set(routed.map((route) => route.slice(route.indexOf(' ') + 1)));
const documented = new Set(spans.filter((span) => /^(GET|POST|DELETE|PUT|PATCH) \/v1\/\S+$/.test(span)));
const namedPaths = new Set(spans.filter((span) => /^\/v1\/\S+$/.test(span)));

describe('docs/api.md and the /v1 route table', () => {
  it('reads both', () => {
    expect(routed.length).toBeGreaterThan(5);
    expect(documented.size).toBeGreaterThan(5);
  });

  it('documents every routed method and path', () => {
    expect(routed.filter((route) => !documented.has(route))).toEqual([]);
  });

  it('documents only routes that exist', () => {
    expect([...documented].filter((route) => !routed.includes(route))).toEqual([]);
    expect([...namedPaths].filter((path) => !routedPaths.has(path))).toEqual([]);
  });
});
