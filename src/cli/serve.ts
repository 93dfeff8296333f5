import cluster from 'node:cluster';
import { Command } from 'commander';
import { runPrimary, workerIndexVariable } from '../cluster/primary.js';
import { loadConfig } from '../config/loader.js';
import type { Config } from '../config/schema.js';
import type { DatabaseHandle } from '../db/connect.js';
import { loadKeySecret } from '../keys/secret.js';
import { IpcLimiter } from '../limits/ipc-limiter.js';
import type { Gateway } from '../main.js';
import type { Logger } from '../observability/logger.js';
import { defaultModel } from '../providers/local/default-model.js';
import { howToSupplyModel } from '../providers/local/runtime.js';
import { StoppedWhileStarting } from '../startup/stopped-while-starting.js';
import { installTestClock } from '../startup/test-clock.js';
import { testHooksFromEnvironment } from '../startup/test-hooks.js';
import { type CommonOptions, nonEmptyOption, withCommonOptions } from './context.js';
import { bootstrapFirstRun, clientBaseUrl, firstRunBanner, writeFirstKeyFile } from './first-run.js';

/**
 * A server whose standard output is closed (its log reader exited: `serve | head`, a log shipper restarted) keeps
 * serving: an EPIPE would otherwise crash it, taking every tenant's traffic down for the sake of log lines. Said once on
 * stderr; the lines written meanwhile are lost.
 */
function keepServingWithoutStdout(): void {
  let said = false;
  process.stdout.removeAllListeners('error');
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (said) return;
    said = true;
    process.stderr.write(
      `switchboard: standard output is closed (${error.code ?? error.message}); serving on without writing logs to it\n`,
    );
  });
}

function portOption(text: string): number {
  const port = Number(text);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`--port "${text}" is not a port number`);
  return port;
}

function workersOption(text: string): number {
  const workers = Number(text);
  if (!Number.isInteger(workers) || workers < 1 || workers > 256)
    throw new Error(`--workers "${text}" is not 1 to 256`);
  return workers;
}

interface ServeOptions extends CommonOptions {
  host?: string;
  port?: number;
  workers?: number;
}

/**
 * A fresh installation gets an account and a key to try it with. The key is printed once, and only to a terminal:
 * output that is not one ends up in journald, docker logs or a CI log, where others read it. Then the key goes to a
 * file in the data directory that only this user can read, and the log says where (never the key).
 */
async function announceFirstRun(
  config: Config,
  database: DatabaseHandle,
  listeningUrl: string,
  json: boolean,
  logger: Logger,
) {
  const toTerminal = process.stdout.isTTY === true;
  let keyFile = '';
  const firstRun = await bootstrapFirstRun(
    database.db,
    loadKeySecret(config.server.dataDir, config.keys.secret),
    // Before the key is committed: a key that cannot be kept is not created.
    (created) => {
      if (!toTerminal) keyFile = writeFirstKeyFile(config.server.dataDir, created.key);
    },
  );
  if (!firstRun) return;
  const names = config.models.map((model) => model.name);
  const model = names.includes(defaultModel.name) ? defaultModel.name : names[0];
  const baseUrl = clientBaseUrl(listeningUrl);
  if (!toTerminal) {
    const { key: _key, ...announced } = firstRun;
    logger.warn(
      { account: firstRun.account, keyId: firstRun.keyId, keyFile },
      `first run: created the account "${firstRun.account}" and its first API key; the output is not a terminal, so the key is not printed: it is in ${keyFile}, readable only by this user`,
    );
    if (json) {
      process.stdout.write(
        `${JSON.stringify({ event: 'first_run', ...announced, keyFile, baseUrl, model: model ?? null })}\n`,
      );
    }
    return;
  }
  if (json) {
    process.stdout.write(`${JSON.stringify({ event: 'first_run', ...firstRun, baseUrl, model: model ?? null })}\n`);
  } else {
    process.stdout.write(firstRunBanner({ baseUrl, key: firstRun.key, account: firstRun.account, model }));
  }
}

function warnIfNoModels(config: Config, file: string | undefined, logger: Logger): void {
  if (config.models.length > 0) return;
  logger.warn(
    { config: file ?? 'built-in defaults' },
    `no models are configured: add providers and models to the configuration file (see switchboard.example.yaml). ${howToSupplyModel}`,
  );
}

export function serveCommand(): Command {
  return withCommonOptions(
    new Command('serve')
      .description('start the gateway')
      .option('--host <host>', 'address to listen on (overrides server.host)', nonEmptyOption('--host'))
      .option('--port <port>', 'port to listen on (overrides server.port)', portOption)
      .option('--workers <n>', 'processes sharing the port (default 1; up to one per core helps)', workersOption),
  ).action(async (options: ServeOptions) => {
    keepServingWithoutStdout();
    installTestClock();
    const { config, file } = loadConfig({
      file: options.config,
      overrides: { host: options.host, port: options.port, dataDir: options.dataDir },
    });
    const json = options.json === true;
    const workers = options.workers ?? 1;
    if (workers > 1 && cluster.isPrimary) {
      const { createLogger } = await import('../observability/logger.js');
      const { warnOfUnpricedModels } = await import('../startup/warn-unpriced-models.js');
      const { warnOfUnfoldedEmails } = await import('../startup/warn-unfolded-emails.js');
      const { warnOfLookAlikeEmails } = await import('../startup/warn-look-alike-emails.js');
      const logger = createLogger(config.logging.level);
      const listeningUrl = `http://${config.server.host}:${config.server.port}`;
      await runPrimary({
        config,
        workers,
        logger,
        // The primary creates the first account once, before any worker could race it, and warns about the
        // configuration once for all the workers.
        beforeWorkers: async (database) => {
          await announceFirstRun(config, database, listeningUrl, json, logger);
          warnIfNoModels(config, file, logger);
          await warnOfUnpricedModels(config, database.db, logger);
          await warnOfUnfoldedEmails(database.db, logger);
          await warnOfLookAlikeEmails(database.db, logger);
        },
        onListening: (url, port) => {
          if (json) process.stdout.write(`${JSON.stringify({ event: 'listening', url, port, workers })}\n`);
        },
      });
      return;
    }

    const workerIndex = cluster.isWorker ? Number(process.env[workerIndexVariable] ?? '0') : undefined;
    // Signal handlers come first: until a process has one, SIGTERM kills it outright, and whoever reads "listening"
    // (logged while the gateway starts) may stop it at once. A signal while starting is acted on once started.
    let gateway: Gateway | undefined;
    let stopRequested: NodeJS.Signals | undefined;
    let signals = 0;
    // A signal during the first run waits for it: the first key is created, and printed or in its file, or neither.
    let firstRunSettled: Promise<unknown> = Promise.resolve();
    const shutDown = (running: Gateway) =>
      firstRunSettled
        .then(() => running.close())
        .then(() => process.exit(0))
        .catch((error: unknown) => {
          running.logger.error({ err: error }, 'error during shutdown');
          process.exit(1);
        });
    const stop = (signal: NodeJS.Signals) => {
      signals++;
      if (signals > 1) {
        if (gateway) gateway.logger.warn({ signal }, 'second signal: exiting without waiting');
        else process.stderr.write(`switchboard: second ${signal} while starting: exiting without waiting\n`);
        process.exit(1);
      }
      if (!gateway) {
        stopRequested = signal;
        return;
      }
      gateway.logger.info({ signal }, 'received signal');
      void shutDown(gateway);
    };
    process.on('SIGTERM', stop);
    // A worker leaves Ctrl+C to the primary, which stops the workers in order.
    if (workerIndex === undefined) process.on('SIGINT', stop);
    else process.on('SIGINT', () => {});

    // Loaded on demand: the server's modules (HTTP, metrics, upstream client) would slow every other command down.
    const { startGateway } = await import('../main.js');
    const testHooks = testHooksFromEnvironment();
    const starting = startGateway(
      config,
      workerIndex === undefined
        ? { stopRequested: () => stopRequested, testHooks }
        : {
            testHooks,
            // Without Redis, the primary keeps the limit counters for every worker.
            limiter: config.redis.url ? undefined : new IpcLimiter(),
            runRetention: workerIndex === 0,
            clusterWorker: true,
            warnAboutConfig: false,
            stopRequested: () => stopRequested,
          },
    );
    try {
      gateway = await starting;
    } catch (error) {
      // Stopped before listening (it logged so and closed what it had opened): a clean stop, not a failed start.
      if (error instanceof StoppedWhileStarting) process.exit(0);
      if (workerIndex === undefined) throw error;
      // The primary prints the reason once and stops the others, rather than every worker printing it and respawning.
      const message = error instanceof Error ? error.message : String(error);
      await new Promise((resolve) =>
        process.send?.({ channel: 'switchboard-worker', kind: 'start-failed', message }, resolve),
      );
      process.exit(1);
    }
    const running = gateway;
    if (stopRequested) {
      running.logger.info({ signal: stopRequested }, 'received signal while starting');
      await shutDown(running);
      return;
    }
    if (workerIndex === undefined) warnIfNoModels(config, file, running.logger);
    // A promise a dependency left without a handler (node-llama-cpp's decode loop has): logged, not fatal, so that one
    // request's failure inside a library does not take every tenant's traffic down with the process.
    process.on('unhandledRejection', (reason) => {
      running.logger.error({ err: reason }, 'unhandled promise rejection (logged, not fatal)');
    });
    if (workerIndex === undefined) {
      const firstRun = announceFirstRun(config, running.database, running.url, json, running.logger);
      firstRunSettled = firstRun.catch(() => {});
      try {
        await firstRun;
      } catch (error) {
        // Nothing was created (bootstrapFirstRun rolled back): the server stops, saying why, and the next start retries.
        await running.close();
        throw error;
      }
      if (json)
        process.stdout.write(`${JSON.stringify({ event: 'listening', url: running.url, port: running.port })}\n`);
    } else {
      process.send?.({ channel: 'switchboard-worker', kind: 'listening', url: running.url, port: running.port });
    }
  });
}
