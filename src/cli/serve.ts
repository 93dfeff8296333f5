import { Command } from 'commander';
import { loadConfig } from '../config/loader.js';
import { loadKeySecret } from '../keys/secret.js';
import { defaultModel } from '../providers/local/default-model.js';
import { howToSupplyModel } from '../providers/local/runtime.js';
import { type CommonOptions, withCommonOptions } from './context.js';
import { bootstrapFirstRun, clientBaseUrl, firstRunBanner } from './first-run.js';

function portOption(text: string): number {
  const port = Number(text);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`--port "${text}" is not a port number`);
  return port;
}

export function serveCommand(): Command {
  return withCommonOptions(
    new Command('serve')
      .description('start the gateway')
      .option('--host <host>', 'address to listen on (overrides server.host)')
      .option('--port <port>', 'port to listen on (overrides server.port)', portOption),
  ).action(async (options: CommonOptions & { host?: string; port?: number }) => {
    const { config, file } = loadConfig({
      file: options.config,
      overrides: { host: options.host, port: options.port, dataDir: options.dataDir },
    });
    // Loaded on demand: the server's modules (HTTP, metrics, upstream client) would slow every other command down.
    const { startGateway } = await import('../main.js');
    const gateway = await startGateway(config);
    if (config.models.length === 0) {
      gateway.logger.warn(
        { config: file ?? 'built-in defaults' },
        `no models are configured: add providers and models to the configuration file (see switchboard.example.yaml). ${howToSupplyModel}`,
      );
    }
    // A fresh installation gets an account and a key to try it with, printed once (never logged).
    const firstRun = await bootstrapFirstRun(
      gateway.database.db,
      loadKeySecret(config.server.dataDir, config.keys.secret),
    );
    if (firstRun) {
      const names = config.models.map((model) => model.name);
      const model = names.includes(defaultModel.name) ? defaultModel.name : names[0];
      const baseUrl = clientBaseUrl(gateway.url);
      if (options.json) {
        process.stdout.write(`${JSON.stringify({ event: 'first_run', ...firstRun, baseUrl, model: model ?? null })}\n`);
      } else {
        process.stdout.write(firstRunBanner({ baseUrl, key: firstRun.key, account: firstRun.account, model }));
      }
    }
    if (options.json) {
      process.stdout.write(`${JSON.stringify({ event: 'listening', url: gateway.url, port: gateway.port })}\n`);
    }
    let signals = 0;
    const stop = (signal: NodeJS.Signals) => {
      signals++;
      if (signals > 1) {
        gateway.logger.warn({ signal }, 'second signal: exiting without waiting');
        process.exit(1);
      }
      gateway.logger.info({ signal }, 'received signal');
      gateway
        .close()
        .then(() => process.exit(0))
        .catch((error: unknown) => {
          gateway.logger.error({ err: error }, 'error during shutdown');
          process.exit(1);
        });
    };
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
  });
}
