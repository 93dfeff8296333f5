import { askPrimary } from '../cluster/ask-primary.js';
import type { Logger } from '../observability/logger.js';
import type { DeploymentHealth } from './deployment-health.js';
import type { HealthLedger } from './health-ledger.js';
import { type HealthExchange, type HealthExchangeAnswer, SharedHealthStore } from './shared-health-store.js';

/**
 * Deployment health shared between the workers of `serve --workers N` without Redis: each worker exchanges with the
 * primary process, which keeps the one ledger (health-ledger.ts), every interval and never on a request's path. An
 * ejection one worker decides reaches the others within an interval or two; a primary that does not answer leaves
 * each worker judging its own outcomes, as one process would.
 */

interface HealthMessage {
  channel: 'switchboard-health';
  id: number;
  kind: 'exchange' | 'answer';
  exchange?: HealthExchange;
  answer?: HealthExchangeAnswer;
}

const isHealthMessage = (message: unknown): message is HealthMessage =>
  (message as HealthMessage | null)?.channel === 'switchboard-health';

export interface IpcHealthStoreOptions {
  health: DeploymentHealth;
  /** Every configured deployment id: those the primary does not name as ejected are healthy. */
  deployments: readonly string[];
  intervalMs: number;
  logger: Logger;
  channel?: NodeJS.Process;
  /** The clock of `health` (exchanges carry it, and the ejections' times are on it). */
  now?: () => number;
}

/** The worker's side. */
export function ipcHealthStore(options: IpcHealthStoreOptions): SharedHealthStore {
  const isAnswer = (message: unknown): message is HealthMessage =>
    isHealthMessage(message) && message.kind === 'answer';
  // An exchange not answered within an interval is given up; the next one carries what it did not.
  const primary = askPrimary(isAnswer, Math.max(options.intervalMs, 1000), options.channel);
  return new SharedHealthStore({
    health: options.health,
    intervalMs: options.intervalMs,
    logger: options.logger,
    storeName: 'the primary process',
    now: options.now,
    transport: async (exchange) => {
      const reply = await primary.ask(
        (id): HealthMessage => ({ channel: 'switchboard-health', id, kind: 'exchange', exchange }),
      );
      if (!reply?.answer) throw new Error('the primary process did not answer');
      const states: HealthExchangeAnswer['states'] = {};
      if (exchange.readStates) {
        for (const deployment of options.deployments) states[deployment] = reply.answer.states[deployment] ?? null;
      }
      return { merged: reply.answer.merged, states };
    },
    onClose: () => primary.close(),
  });
}

/** The primary's side: answers one worker's exchanges from the ledger every worker shares. */
export function serveHealthLedger(
  ledger: HealthLedger,
  send: (message: HealthMessage) => void,
): (message: unknown) => void {
  return (message) => {
    if (!isHealthMessage(message) || message.kind !== 'exchange' || !message.exchange) return;
    send({ channel: 'switchboard-health', id: message.id, kind: 'answer', answer: ledger.exchange(message.exchange) });
  };
}
