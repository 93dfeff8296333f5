import { existsSync } from 'node:fs';
import { defaultModel, defaultModelPath } from '../providers/local/default-model.js';

/**
 * The configuration used when there is no configuration file: everything at its schema default, plus the built-in
 * local model when its file is in the data directory (`npm start` fetches it there), so a fresh install answers
 * chat completions with no provider account and no network.
 */
export function builtInConfig(dataDir: string): Record<string, unknown> {
  const modelPath = defaultModelPath(dataDir);
  if (!existsSync(modelPath)) return {};
  return {
    providers: [
      {
        name: defaultModel.provider,
        type: 'local',
        model_path: modelPath,
        default_max_tokens: defaultModel.answerTokens,
      },
    ],
    models: [builtInModelEntry()],
  };
}

/** The built-in model's entry in `models`, as a fresh install serves it. */
export function builtInModelEntry() {
  return {
    name: defaultModel.name,
    provider: defaultModel.provider,
    owned_by: 'switchboard',
    context_window: defaultModel.contextWindow,
    pricing: { input: 0, output: 0 },
  };
}
