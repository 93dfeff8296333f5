import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { brotliCompressSync, gzipSync, constants as zlibConstants } from 'node:zlib';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { apiError } from '../errors/api-error.js';
import { packagePath } from '../package-files.js';

/**
 * Serves the built web console (console/dist, made by `npm run build`) at /console. The files are read into memory
 * at start-up (a few hundred kilobytes), compressed once on first request, and served with strong ETags. Hashed
 * files under assets/ are immutable; every other path is the single-page app's index.html, so deep links work.
 * Every response carries a strict Content-Security-Policy: the console loads nothing from anywhere but this origin.
 */

export const defaultConsoleDirectory = packagePath('console', 'dist');

interface Asset {
  body: Buffer;
  contentType: string;
  etag: string;
  immutable: boolean;
  compressed?: { br: Buffer; gzip: Buffer };
}

export interface ConsoleAssets {
  directory: string;
  files: ReadonlyMap<string, Asset>;
}

const contentTypes: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.txt': 'text/plain; charset=utf-8',
  '.woff2': 'font/woff2',
};

const compressible = /^(text\/|application\/json|image\/svg)/;

const securityHeaders = {
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
    "font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'; " +
    // No code of the console writes HTML from strings (Preact sets text): any sink that would parse some is refused.
    "require-trusted-types-for 'script'; trusted-types 'none'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  'permissions-policy': 'camera=(), microphone=(), geolocation=(), payment=()',
};

function walk(directory: string, prefix = ''): string[] {
  const names: string[] = [];
  for (const entry of readdirSync(directory, { withFileTypes: true })) {
    const relative = prefix ? `${prefix}/${entry.name}` : entry.name;
    if (entry.isDirectory()) names.push(...walk(path.join(directory, entry.name), relative));
    else if (entry.isFile()) names.push(relative);
  }
  return names;
}

/** Reads the built console; an empty set when it has not been built (the routes then say so). */
export function loadConsoleAssets(directory = defaultConsoleDirectory): ConsoleAssets {
  const files = new Map<string, Asset>();
  if (existsSync(directory) && statSync(directory).isDirectory()) {
    for (const name of walk(directory)) {
      const body = readFileSync(path.join(directory, name));
      files.set(name, {
        body,
        contentType: contentTypes[path.extname(name).toLowerCase()] ?? 'application/octet-stream',
        etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`,
        immutable: name.startsWith('assets/'),
      });
    }
  }
  return { directory, files };
}

function compressedForms(asset: Asset): { br: Buffer; gzip: Buffer } {
  asset.compressed ??= {
    br: brotliCompressSync(asset.body, { params: { [zlibConstants.BROTLI_PARAM_QUALITY]: 11 } }),
    gzip: gzipSync(asset.body, { level: 9 }),
  };
  return asset.compressed;
}

function send(request: FastifyRequest, reply: FastifyReply, asset: Asset) {
  reply.headers(securityHeaders);
  reply.header('content-type', asset.contentType);
  reply.header('etag', asset.etag);
  reply.header('cache-control', asset.immutable ? 'public, max-age=31536000, immutable' : 'no-cache');
  if (request.headers['if-none-match'] === asset.etag) return reply.code(304).send();
  if (compressible.test(asset.contentType) && asset.body.length > 1024) {
    reply.header('vary', 'accept-encoding');
    const accepted = String(request.headers['accept-encoding'] ?? '');
    if (/\bbr\b/.test(accepted)) return reply.header('content-encoding', 'br').send(compressedForms(asset).br);
    if (/\bgzip\b/.test(accepted)) return reply.header('content-encoding', 'gzip').send(compressedForms(asset).gzip);
  }
  return reply.send(asset.body);
}

export function registerConsole(app: FastifyInstance, assets: ConsoleAssets): void {
  const redirect = (_request: FastifyRequest, reply: FastifyReply) => reply.redirect('/console/', 302);
  app.get('/', redirect);
  app.get('/console', redirect);
  app.get('/console/*', async (request, reply) => {
    const index = assets.files.get('index.html');
    if (!index) {
      throw apiError(
        'console_not_built',
        `The web console has not been built (${assets.directory} is missing); run \`npm run build\`.`,
      );
    }
    const wildcard = (request.params as { '*'?: string })['*'] ?? '';
    const file = assets.files.get(wildcard);
    if (file && wildcard !== 'index.html') return send(request, reply, file);
    // A missing hashed file is a stale page asking for an old build: 404, not the app's HTML under a .js name.
    if (wildcard.startsWith('assets/') || /\.[a-z0-9]{1,5}$/i.test(wildcard)) {
      throw apiError('unknown_url', `No console file ${wildcard.slice(0, 200)}.`);
    }
    return send(request, reply, index);
  });
}
