import type { Logger } from '../observability/logger.js';
import type { DeploymentHealth, Ejection, Transition } from './deployment-health.js';
import type { AccountTally, OutcomeDelta } from './outcome-window.js';

/**
 * Shares deployment health between processes, off the request path: every `intervalMs` one exchange with the shared
 * store (Redis between nodes: redis-health-store.ts; the primary process between the workers of `serve --workers`
 * without Redis: health-ledger.ts) sends this process's new outcomes (per deployment, bucket and account) and the
 * ejections and recoveries it decided, and reads back the merged window of each deployment that failed here and every
 * deployment's shared ejection. Requests only ever read the local copy. An interval rather than a push: an ejection
 * is not urgent to the others (the process that saw the evidence acts at once, the others within an interval), and a
 * poll heals itself after an outage of the store. While the store does not answer, each process judges its own
 * outcomes alone.
 */

/** What one process sends the shared store in one exchange. */
export interface HealthExchange {
  /**
   * Ejections and recoveries decided here since the last exchange, latest per deployment. A recovery clears the shared
   * ejection only if it is still the one recovered from; a recovered ejection arriving late is not taken back in.
   */
  transitions: Array<[deployment: string, transition: Transition]>;
  /** Outcomes not sent yet. */
  outcomes: Array<{ deployment: string; deltas: OutcomeDelta[] }>;
  /** Deployments whose merged window is to be read back. */
  judge: string[];
  /** Whether to read back every deployment's shared ejection. */
  readStates: boolean;
  /** This process's clock, which ejections' `until` is on. */
  now: number;
}

/** The store's answer: plain objects, so that it crosses the cluster's IPC channel as it is. */
export interface HealthExchangeAnswer {
  /** The merged window of each deployment of `judge`. */
  merged: Record<string, AccountTally[]>;
  /** Every configured deployment's shared ejection (null: healthy), when `readStates` was asked. */
  states: Record<string, Ejection | null>;
}

/** One exchange with the store; rejects when the store cannot be reached (nothing is then certainly written). */
export type HealthTransport = (exchange: HealthExchange) => Promise<HealthExchangeAnswer>;

export interface SharedHealthStoreOptions {
  health: DeploymentHealth;
  transport: HealthTransport;
  intervalMs: number;
  logger: Logger;
  /** The store as log lines name it ("Redis", "the primary process"). */
  storeName: string;
  /** Runs once the last exchange has ended, at close. */
  onClose?: () => void;
  now?: () => number;
}

export class SharedHealthStore {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  /** Ejections and recoveries decided here and not yet written, latest per deployment. */
  private readonly outbox = new Map<string, Transition>();
  private reachable: boolean | undefined;
  private readonly now: () => number;

  constructor(private readonly options: SharedHealthStoreOptions) {
    this.now = options.now ?? Date.now;
    options.health.onTransition((deployment, transition) => this.outbox.set(deployment, transition));
  }

  start(): void {
    this.timer = setInterval(() => void this.exchange(), this.options.intervalMs);
    this.timer.unref();
  }

  /** One exchange with the store (tests call it to be sure it ran); concurrent calls share the one in flight. */
  exchange(): Promise<void> {
    this.running ??= this.exchangeOnce().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
    this.options.onClose?.();
  }

  private async exchangeOnce(): Promise<void> {
    const { health, transport } = this.options;
    const now = this.now();
    const transitions = this.takeOutbox();
    const outcomes: HealthExchange['outcomes'] = [];
    for (const [deployment, window] of health.outcomeWindows()) {
      const deltas = window.unsent(now);
      if (deltas.length > 0) outcomes.push({ deployment, deltas });
    }
    const judge = health.takeToJudge();
    let answer: HealthExchangeAnswer;
    try {
      answer = await transport({ transitions, outcomes, judge, readStates: true, now });
    } catch (error) {
      this.giveBack(transitions);
      this.setReachable(false, error);
      health.judgeOwnWindows(judge);
      return;
    }
    for (const { deployment, deltas } of outcomes) health.outcomeWindows().get(deployment)?.markSent(deltas);
    this.setReachable(true);
    const states = new Map(
      Object.entries(answer.states).map(([deployment, state]) => [deployment, state ?? undefined]),
    );
    health.adoptShared(states, new Map(Object.entries(answer.merged)), new Set(this.outbox.keys()));
    // Ejections decided on the merged windows just now reach the others without waiting an interval.
    if (this.outbox.size > 0) await this.flushTransitions();
  }

  private async flushTransitions(): Promise<void> {
    const transitions = this.takeOutbox();
    try {
      await this.options.transport({ transitions, outcomes: [], judge: [], readStates: false, now: this.now() });
    } catch (error) {
      this.giveBack(transitions);
      this.setReachable(false, error);
    }
  }

  private takeOutbox(): HealthExchange['transitions'] {
    const transitions = [...this.outbox];
    this.outbox.clear();
    return transitions;
  }

  /** Transitions not certainly written: sent again next time, unless a newer one for the deployment came meanwhile. */
  private giveBack(transitions: HealthExchange['transitions']): void {
    for (const [deployment, transition] of transitions) {
      if (!this.outbox.has(deployment)) this.outbox.set(deployment, transition);
    }
  }

  private setReachable(reachable: boolean, error?: unknown): void {
    this.options.health.setShared(reachable);
    if (this.reachable === reachable) return;
    const first = this.reachable === undefined;
    this.reachable = reachable;
    const store = this.options.storeName;
    if (!reachable) {
      this.options.logger.warn(
        { err: error },
        `deployment health: ${store} does not answer; each process judges its own outcomes until it does`,
      );
    } else if (!first) {
      this.options.logger.info(`deployment health: shared through ${store} again`);
    }
  }
}
