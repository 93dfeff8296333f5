import {
  askThrottleOnPrimary,
  serveThrottleOnPrimary,
  type ThrottleChannel,
  type ThrottleMessage,
} from '../cluster/throttle-channel.js';
import type { Logger } from '../observability/logger.js';
import type { InvitationLimit } from './invitation-limit.js';

/**
 * The invitation limit of `serve --workers N` without Redis: the workers ask the primary process, which keeps the one
 * count (cluster/throttle-channel.ts), so an inviter whose requests the workers take in turns gets one budget, not N.
 */

const channel = 'switchboard-invitation-limit';
type Step = 'consume';

/** The worker's side: asks the primary's count, and its own when the primary does not answer. */
export class IpcInvitationLimit implements InvitationLimit {
  private readonly primary: ThrottleChannel<Step>;

  constructor(
    private readonly local: InvitationLimit,
    logger: Logger,
    ipc?: NodeJS.Process,
  ) {
    this.primary = askThrottleOnPrimary<Step>({
      channel,
      logger,
      fallBack: 'invitations are limited by this worker',
      ipc,
    });
  }

  async consume(accountId: string, userId: string): Promise<number> {
    return (await this.primary.ask('consume', [accountId, userId])) ?? this.local.consume(accountId, userId);
  }

  close(): void {
    this.primary.close();
    this.local.close();
  }
}

/** The primary's side: answers one worker's questions from the one count every worker shares. */
export function serveInvitationLimit(
  limit: InvitationLimit,
  send: (message: ThrottleMessage<Step>) => void,
): (message: unknown) => void {
  return serveThrottleOnPrimary<Step>({
    channel,
    steps: ['consume'],
    answer: (_step, [accountId = '', userId = '']) => limit.consume(accountId, userId),
    send,
  });
}
