import { Command } from 'commander';
import { loadConfig } from '../config/loader.js';
import { type CommonOptions, withCommonOptions } from './context.js';
import { consoleOutput, printJson } from './output.js';

export function configCommand(): Command {
  const config = new Command('config').description('inspect the configuration');
  withCommonOptions(
    config.command('check').description('validate the configuration file and print what it defines'),
  ).action(async (options: CommonOptions) => {
    const output = consoleOutput(options.json === true);
    // Throws ConfigError listing every problem with the path of its field; the CLI prints it and exits non-zero.
    const { config: loaded, file } = loadConfig({ file: options.config, overrides: { dataDir: options.dataDir } });
    const summary = {
      ok: true,
      file: file ?? null,
      listen: `${loaded.server.host}:${loaded.server.port}`,
      dataDir: loaded.server.dataDir,
      providers: loaded.providers.map((provider) => ({
        name: provider.name,
        type: provider.type,
        ...(provider.type === 'local' ? { modelPath: provider.modelPath } : { baseUrl: provider.baseUrl }),
      })),
      models: loaded.models.map((model) => ({
        name: model.name,
        provider: model.provider,
        upstreamModel: model.upstreamModel,
        deployments: model.deployments.map((deployment) => ({ id: deployment.id, weight: deployment.weight })),
        fallbacks: model.fallbacks,
      })),
    };
    if (output.json) return printJson(output, summary);
    output.write(
      [
        `Configuration OK (${file ?? 'built-in defaults'})`,
        `  listen:    ${summary.listen}`,
        `  data dir:  ${summary.dataDir}`,
        `  providers: ${summary.providers.map((provider) => `${provider.name} (${provider.type})`).join(', ') || '(none)'}`,
        `  models:    ${summary.models.map((model) => model.name).join(', ') || '(none)'}`,
        ...summary.models.map(
          (model) =>
            `    ${model.name} -> ${model.deployments.map((deployment) => `${deployment.id} (weight ${deployment.weight})`).join(', ')}${model.fallbacks.length > 0 ? `; fallbacks: ${model.fallbacks.join(', ')}` : ''}`,
        ),
      ].join('\n'),
    );
  });
  return config;
}
