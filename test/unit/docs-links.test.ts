import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { anchorsOf, linksOf, readDoc, repositoryRoot } from '../support/markdown.js';

/**
 * Every relative link in README.md and docs/*.md leads to a file that exists, and a `#fragment` to a heading of that
 * file (GitHub's anchors). Links to the web are not followed: the test must not depend on the network.
 */

const documents = [
  'README.md',
  ...readdirSync(path.join(repositoryRoot, 'docs'))
    .filter((file) => file.endsWith('.md'))
    .map((file) => `docs/${file}`),
];

describe('links in README.md and docs/', () => {
  it('computes anchors as GitHub does', () => {
    const anchors = anchorsOf('# The `/v1` API\n## `POST /v1/messages`, `count_tokens`\n## Errors\n## Errors\n');
    expect([...anchors]).toEqual(['the-v1-api', 'post-v1messages-count_tokens', 'errors', 'errors-1']);
  });

  it('lead to files and headings that exist', () => {
    const broken: string[] = [];
    for (const document of documents) {
      for (const link of linksOf(readDoc(document))) {
        if (/^[a-z][a-z+.-]*:/i.test(link.target)) continue;
        const [filePart = '', fragment] = link.target.split('#') as [string, string | undefined];
        const target =
          filePart === '' ? document : path.posix.normalize(path.posix.join(path.posix.dirname(document), filePart));
        const where = `${document} line ${link.line}: ${link.target}`;
        if (target.startsWith('..') || !existsSync(path.join(repositoryRoot, target))) {
          broken.push(`${where} (no file ${target})`);
          continue;
        }
        if (fragment === undefined || fragment === '') continue;
        if (!target.endsWith('.md') || statSync(path.join(repositoryRoot, target)).isDirectory()) {
          broken.push(`${where} (an anchor into a file that has no headings)`);
        } else if (!anchorsOf(readDoc(target)).has(decodeURIComponent(fragment))) {
          broken.push(`${where} (no heading #${fragment} in ${target})`);
        }
      }
    }
    expect(broken).toEqual([]);
  });
});

/** Comments in the code send readers to a section of the docs (`docs/performance.md#hot-metrics`): it must exist. */
describe('references to docs/ from the code', () => {
  it('lead to headings that exist', () => {
    const broken: string[] = [];
    for (const folder of ['src', 'console/src', 'test', 'bench', 'compat', 'scripts']) {
      const root = path.join(repositoryRoot, folder);
      if (!existsSync(root)) continue;
      for (const file of readdirSync(root, { recursive: true, encoding: 'utf8' })) {
        if (!/\.(ts|tsx|mjs|js|cjs|sh|py)$/.test(file)) continue;
        const text = readDoc(`${folder}/${file}`);
        for (const match of text.matchAll(/docs\/([\w-]+\.md)#([\w-]+)/g)) {
          const target = `docs/${match[1]}`;
          const where = `${folder}/${file}: ${match[0]}`;
          if (!existsSync(path.join(repositoryRoot, target))) broken.push(`${where} (no file)`);
          else if (!anchorsOf(readDoc(target)).has(match[2] as string)) broken.push(`${where} (no such heading)`);
        }
      }
    }
    expect([...new Set(broken)]).toEqual([]);
  });
});
