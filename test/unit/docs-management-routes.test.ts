import { describe, expect, it } from 'vitest';
import { managementRoutes } from '../../src/api/manage/index.js';
import { codeSpans, readDoc, tablesOf } from '../support/markdown.js';

/**
 * docs/management-api.md's route table against the route declarations (src/api/manage/): every route has a row with
 * who may call it, and every row is a route. `/api/openapi.json` is served beside them.
 */

const routesTable = tablesOf(readDoc('docs/management-api.md')).find((table) => table.header[0] === 'Route');
const documented = (routesTable?.rows ?? []).map((row) => ({
  route: codeSpans(row.cells[0] ?? '')[0] ?? '',
  who: row.cells[1] ?? '',
  line: row.line,
}));
const declared = managementRoutes.map((route) => ({
  route: `${route.method} ${route.path.replace(/:(\w+)/g, '{$1}')}`,
  who: route.access,
}));

describe('docs/management-api.md and the management routes', () => {
  it('reads the table', () => {
    expect(documented.length).toBeGreaterThan(10);
  });

  it('documents every route, with who may call it', () => {
    const wrong: string[] = [];
    for (const route of declared) {
      const row = documented.find((entry) => entry.route === route.route);
      if (!row) wrong.push(`${route.route}: no row`);
      else if (row.who !== route.who)
        wrong.push(`${route.route}: ${route.who}, documented ${row.who} (line ${row.line})`);
    }
    expect(wrong).toEqual([]);
  });

  it('documents only routes that exist', () => {
    const known = new Set([...declared.map((route) => route.route), 'GET /api/openapi.json']);
    expect(documented.filter((row) => !known.has(row.route)).map((row) => `${row.route} (line ${row.line})`)).toEqual(
      [],
    );
  });
});
