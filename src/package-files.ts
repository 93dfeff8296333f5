import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Files that ship next to the code (package.json, the built console). The code runs from src/ under the tests, from
 * the bundle in dist/bundle/ when installed, so paths are found from the package's root rather than written relative
 * to each module: the nearest folder above this module that holds a package.json.
 */
function findPackageRoot(): string {
  let directory = path.dirname(fileURLToPath(import.meta.url));
  while (!existsSync(path.join(directory, 'package.json'))) {
    const parent = path.dirname(directory);
    if (parent === directory) throw new Error('switchboard: cannot find its package.json above its code');
    directory = parent;
  }
  return directory;
}

const packageRoot = findPackageRoot();

export function packagePath(...segments: string[]): string {
  return path.join(packageRoot, ...segments);
}

export function packageVersion(): string {
  try {
    return (JSON.parse(readFileSync(packagePath('package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}
