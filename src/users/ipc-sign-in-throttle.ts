import {
  askThrottleOnPrimary,
  serveThrottleOnPrimary,
  type ThrottleChannel,
  type ThrottleMessage,
} from '../cluster/throttle-channel.js';
import type { Logger } from '../observability/logger.js';
import type { MemorySignInThrottle, SignInThrottle } from './sign-in-throttle.js';

/**
 * The sign-in throttle of `serve --workers N` without Redis: the workers ask the primary process, which keeps the one
 * set of counts (cluster/throttle-channel.ts), so a guesser whose attempts the workers take in turns gets one budget,
 * not N.
 */

const channel = 'switchboard-sign-in';
type Step = 'begin' | 'succeeded' | 'withdraw';

/** The worker's side: forwards every attempt to the primary's throttle, and keeps its own counts for when it is gone. */
export class IpcSignInThrottle implements SignInThrottle {
  private readonly primary: ThrottleChannel<Step>;

  constructor(
    private readonly local: MemorySignInThrottle,
    logger: Logger,
    ipc?: NodeJS.Process,
  ) {
    this.primary = askThrottleOnPrimary<Step>({
      channel,
      logger,
      fallBack: 'sign-in attempts are throttled by this worker',
      ipc,
    });
  }

  async beginAttempt(email: string, clientAddress: string): Promise<number> {
    const waitSeconds = await this.primary.ask('begin', [email, clientAddress]);
    // The primary's count is the one that matters; this worker's is kept for when the primary cannot answer.
    if (waitSeconds === undefined) return this.local.beginAttempt(email, clientAddress);
    if (waitSeconds === 0) this.local.countFailure(email, clientAddress);
    return waitSeconds;
  }

  async attemptSucceeded(email: string, clientAddress: string): Promise<void> {
    await this.local.attemptSucceeded(email, clientAddress);
    await this.primary.ask('succeeded', [email, clientAddress]);
  }

  async withdrawAttempt(email: string, clientAddress: string): Promise<void> {
    await this.local.withdrawAttempt(email, clientAddress);
    await this.primary.ask('withdraw', [email, clientAddress]);
  }

  close(): void {
    this.primary.close();
    this.local.close();
  }
}

/** The primary's side: answers one worker's attempts from the one throttle every worker shares. */
export function serveSignInThrottle(
  throttle: SignInThrottle,
  send: (message: ThrottleMessage<Step>) => void,
): (message: unknown) => void {
  return serveThrottleOnPrimary<Step>({
    channel,
    steps: ['begin', 'succeeded', 'withdraw'],
    answer: async (step, [email = '', clientAddress = '']) => {
      if (step === 'begin') return throttle.beginAttempt(email, clientAddress);
      if (step === 'succeeded') await throttle.attemptSucceeded(email, clientAddress);
      else await throttle.withdrawAttempt(email, clientAddress);
      return 0;
    },
    send,
  });
}
