import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { brotliDecompressSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { defaultConsoleDirectory } from '../src/server/console-assets.js';
import { useGatewayWithMock } from './support/gateway-fixture.js';

/** The built console (npm test builds it first) as the gateway serves it at /console. */

const setup = useGatewayWithMock();

function builtFiles(directory = defaultConsoleDirectory, prefix = ''): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? builtFiles(path.join(directory, entry.name), `${prefix}${entry.name}/`)
      : [`${prefix}${entry.name}`],
  );
}

describe('console assets', () => {
  it('serves the app for every console path, with a strict CSP and no caching of the HTML', async () => {
    for (const page of ['/console/', '/console/sign-in', '/console/accounts/acct_x/logs?status=error']) {
      const response = await fetch(`${setup.gateway.url}${page}`);
      expect(response.status, page).toBe(200);
      expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(response.headers.get('cache-control')).toBe('no-cache');
      const policy = response.headers.get('content-security-policy') ?? '';
      expect(policy).toContain("default-src 'self'");
      expect(policy).toContain("script-src 'self'");
      expect(policy).toContain("frame-ancestors 'none'");
      expect(policy).not.toContain('unsafe-inline');
      expect(response.headers.get('x-frame-options')).toBe('DENY');
      expect(response.headers.get('referrer-policy')).toBe('no-referrer');
      expect(await response.text()).toContain('<div id="app"></div>');
    }
  });

  it('redirects / and /console to the console', async () => {
    for (const start of ['/', '/console']) {
      const response = await fetch(`${setup.gateway.url}${start}`, { redirect: 'manual' });
      expect(response.status).toBe(302);
      expect(response.headers.get('location')).toBe('/console/');
    }
  });

  it('serves hashed assets as immutable, compressed, with ETags that answer 304', async () => {
    const html = await (await fetch(`${setup.gateway.url}/console/`)).text();
    const script = /src="(\/console\/assets\/[^"]+\.js)"/.exec(html)?.[1];
    expect(script).toBeDefined();
    const plain = await fetch(`${setup.gateway.url}${script}`, { headers: { 'accept-encoding': 'identity' } });
    expect(plain.status).toBe(200);
    expect(plain.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(plain.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    const body = Buffer.from(await plain.arrayBuffer());
    const etag = plain.headers.get('etag') ?? '';
    expect(etag).toMatch(/^"[\w-]{27}"$/);
    const compressed = await new Promise<{ headers: Record<string, string | string[] | undefined>; body: Buffer }>(
      (resolve, reject) => {
        // fetch would decompress transparently; read the raw bytes to check what went over the wire.
        import('node:http').then(({ get }) =>
          get(`${setup.gateway.url}${script}`, { headers: { 'accept-encoding': 'br, gzip' } }, (response) => {
            const chunks: Buffer[] = [];
            response.on('data', (chunk: Buffer) => chunks.push(chunk));
            response.on('end', () => resolve({ headers: response.headers, body: Buffer.concat(chunks) }));
          }).on('error', reject),
        );
      },
    );
    expect(compressed.headers['content-encoding']).toBe('br');
    expect(compressed.body.length).toBeLessThan(body.length / 2);
    expect(brotliDecompressSync(compressed.body).equals(body)).toBe(true);
    const again = await fetch(`${setup.gateway.url}${script}`, { headers: { 'if-none-match': etag } });
    expect(again.status).toBe(304);
  });

  it('answers 404 for a missing asset instead of the app', async () => {
    const response = await fetch(`${setup.gateway.url}/console/assets/index-missing.js`);
    expect(response.status).toBe(404);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe('unknown_url');
  });

  it('loads nothing from other origins: no CDN, no external fonts', () => {
    for (const file of builtFiles()) {
      if (!/\.(html|css|js)$/.test(file)) continue;
      const text = readFileSync(path.join(defaultConsoleDirectory, file), 'utf8');
      const urls = [...text.matchAll(/https?:\/\/[^\s"'`)]+/g)].map((match) => match[0]);
      // The SVG and XHTML namespaces are identifiers, not requests.
      expect(
        urls.filter((url) => !url.startsWith('http://www.w3.org/')),
        file,
      ).toEqual([]);
      expect(text).not.toMatch(/@import|fonts\.googleapis|cdn\./i);
    }
  });

  it('keeps no secrets in browser storage', () => {
    for (const file of builtFiles()) {
      if (!file.endsWith('.js')) continue;
      const text = readFileSync(path.join(defaultConsoleDirectory, file), 'utf8');
      expect(text, file).not.toMatch(/localStorage|sessionStorage|indexedDB|document\.cookie/);
    }
  });
});
