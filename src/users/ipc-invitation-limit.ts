import { askPrimary, type PrimaryQuestions } from '../cluster/ask-primary.js';
import type { Logger } from '../observability/logger.js';
import type { InvitationLimit } from './invitation-limit.js';

/**
 * The invitation limit of `serve --workers N` without Redis: the workers ask the primary process, which keeps the one
 * count, so an inviter whose requests the workers take in turns gets one budget, not N. A primary that does not answer
 * within a second is not waited for: the worker's own count answers instead (logged).
 */

export interface InvitationLimitMessage {
  channel: 'switchboard-invitation-limit';
  id: number;
  kind: 'consume' | 'answer';
  accountId?: string;
  userId?: string;
  /** The answer: seconds to wait, 0 when the invitation may be made. */
  waitSeconds?: number;
}

const answerTimeoutMs = 1000;

const isInvitationLimitMessage = (message: unknown): message is InvitationLimitMessage =>
  (message as InvitationLimitMessage | null)?.channel === 'switchboard-invitation-limit';

/** The worker's side: asks the primary's count. */
export class IpcInvitationLimit implements InvitationLimit {
  private readonly primary: PrimaryQuestions<InvitationLimitMessage>;

  constructor(
    private readonly local: InvitationLimit,
    private readonly logger: Logger,
    channel: NodeJS.Process = process,
  ) {
    const isAnswer = (message: unknown): message is InvitationLimitMessage =>
      isInvitationLimitMessage(message) && message.kind === 'answer';
    this.primary = askPrimary(isAnswer, answerTimeoutMs, channel);
  }

  async consume(accountId: string, userId: string): Promise<number> {
    const answer = await this.primary.ask(
      (id): InvitationLimitMessage => ({
        channel: 'switchboard-invitation-limit',
        id,
        kind: 'consume',
        accountId,
        userId,
      }),
    );
    if (answer) return answer.waitSeconds ?? 0;
    this.logger.warn('the primary process did not answer: invitations are limited by this worker');
    return this.local.consume(accountId, userId);
  }

  close(): void {
    this.primary.close();
    this.local.close();
  }
}

/** The primary's side: answers one worker's questions from the one count every worker shares. */
export function serveInvitationLimit(
  limit: InvitationLimit,
  send: (message: InvitationLimitMessage) => void,
): (message: unknown) => void {
  return (message) => {
    if (!isInvitationLimitMessage(message) || message.kind !== 'consume') return;
    const { id, accountId = '', userId = '' } = message;
    void limit.consume(accountId, userId).then(
      (waitSeconds) => send({ channel: 'switchboard-invitation-limit', id, kind: 'answer', waitSeconds }),
      () => send({ channel: 'switchboard-invitation-limit', id, kind: 'answer', waitSeconds: 0 }),
    );
  };
}
