import { askPrimary, type PrimaryQuestions } from '../cluster/ask-primary.js';
import type { Logger } from '../observability/logger.js';
import type { MemorySignInThrottle, SignInThrottle } from './sign-in-throttle.js';

/**
 * The sign-in throttle of `serve --workers N` without Redis: the workers ask the primary process, which keeps the one
 * set of counts, so a guesser whose attempts the workers take in turns gets one budget, not N. A primary that does
 * not answer within a second is not waited for: the worker's own counts answer instead (logged).
 */

export interface SignInThrottleMessage {
  channel: 'switchboard-sign-in';
  id: number;
  kind: 'begin' | 'succeeded' | 'withdraw' | 'answer';
  email?: string;
  clientAddress?: string;
  /** The answer to `begin`: seconds to wait, 0 when the attempt may go ahead. */
  waitSeconds?: number;
}

const answerTimeoutMs = 1000;

const isSignInThrottleMessage = (message: unknown): message is SignInThrottleMessage =>
  (message as SignInThrottleMessage | null)?.channel === 'switchboard-sign-in';

/** The worker's side: forwards every attempt to the primary's throttle. */
export class IpcSignInThrottle implements SignInThrottle {
  private readonly primary: PrimaryQuestions<SignInThrottleMessage>;

  constructor(
    private readonly local: MemorySignInThrottle,
    private readonly logger: Logger,
    channel: NodeJS.Process = process,
  ) {
    const isAnswer = (message: unknown): message is SignInThrottleMessage =>
      isSignInThrottleMessage(message) && message.kind === 'answer';
    this.primary = askPrimary(isAnswer, answerTimeoutMs, channel);
  }

  /** Sends one attempt's step; resolves with the primary's answer, or undefined when it did not come in time. */
  private async ask(
    kind: SignInThrottleMessage['kind'],
    email: string,
    clientAddress: string,
  ): Promise<SignInThrottleMessage | undefined> {
    const answer = await this.primary.ask(
      (id): SignInThrottleMessage => ({ channel: 'switchboard-sign-in', id, kind, email, clientAddress }),
    );
    if (!answer) this.logger.warn('the primary process did not answer: sign-in attempts are throttled by this worker');
    return answer;
  }

  async beginAttempt(email: string, clientAddress: string): Promise<number> {
    const answer = await this.ask('begin', email, clientAddress);
    // The primary's count is the one that matters; this worker's is kept for when the primary cannot answer.
    if (!answer) return this.local.beginAttempt(email, clientAddress);
    if (answer.waitSeconds === 0) this.local.countFailure(email, clientAddress);
    return answer.waitSeconds ?? 0;
  }

  async attemptSucceeded(email: string, clientAddress: string): Promise<void> {
    await this.local.attemptSucceeded(email, clientAddress);
    await this.ask('succeeded', email, clientAddress);
  }

  async withdrawAttempt(email: string, clientAddress: string): Promise<void> {
    await this.local.withdrawAttempt(email, clientAddress);
    await this.ask('withdraw', email, clientAddress);
  }

  close(): void {
    this.primary.close();
    this.local.close();
  }
}

/** The primary's side: answers one worker's attempts from the one throttle every worker shares. */
export function serveSignInThrottle(
  throttle: SignInThrottle,
  send: (message: SignInThrottleMessage) => void,
): (message: unknown) => void {
  return (message) => {
    if (!isSignInThrottleMessage(message) || message.kind === 'answer') return;
    const { id, kind, email = '', clientAddress = '' } = message;
    const step =
      kind === 'begin'
        ? throttle.beginAttempt(email, clientAddress)
        : kind === 'succeeded'
          ? throttle.attemptSucceeded(email, clientAddress).then(() => 0)
          : throttle.withdrawAttempt(email, clientAddress).then(() => 0);
    void step.then(
      (waitSeconds) => send({ channel: 'switchboard-sign-in', id, kind: 'answer', waitSeconds }),
      () => send({ channel: 'switchboard-sign-in', id, kind: 'answer', waitSeconds: 0 }),
    );
  };
}
