import type { Logger } from '../observability/logger.js';
import { askPrimary, type PrimaryQuestions } from './ask-primary.js';

/**
 * A throttle of `serve --workers N` without Redis, kept by the primary process and asked by the workers over IPC, so
 * that a client whose requests the workers take in turns gets one budget, not N. Each question is a step of the
 * throttle's own (begin an attempt, count an invitation, …) for a subject (a user and an address, an account and a
 * user); each answer is the seconds to wait, 0 to go ahead. A primary that does not answer within a second is not
 * waited for: the worker's own count answers instead, and the fall-back is logged.
 */

export interface ThrottleMessage<Step extends string = string> {
  channel: string;
  id: number;
  kind: Step | 'answer';
  subject?: readonly string[];
  /** The answer: seconds to wait, 0 when the step may go ahead. */
  waitSeconds?: number;
}

export interface ThrottleChannel<Step extends string> {
  /** The primary's answer to one step, in seconds to wait; undefined (and logged) when it did not come in time. */
  ask(step: Step, subject: readonly string[]): Promise<number | undefined>;
  close(): void;
}

const answerTimeoutMs = 1000;

const isThrottleMessage = (channel: string, message: unknown): message is ThrottleMessage =>
  (message as ThrottleMessage | null)?.channel === channel;

/** The worker's side of the channel named `channel`; `fallBack` says, in the log, what counts without the primary. */
export function askThrottleOnPrimary<Step extends string>(options: {
  channel: string;
  logger: Logger;
  fallBack: string;
  /** The IPC channel to the primary (this process's, unless a test gives another). */
  ipc?: NodeJS.Process;
}): ThrottleChannel<Step> {
  const isAnswer = (message: unknown): message is ThrottleMessage<Step> =>
    isThrottleMessage(options.channel, message) && message.kind === 'answer';
  const primary: PrimaryQuestions<ThrottleMessage<Step>> = askPrimary(isAnswer, answerTimeoutMs, options.ipc);
  return {
    async ask(step, subject) {
      const answer = await primary.ask(
        (id): ThrottleMessage<Step> => ({ channel: options.channel, id, kind: step, subject }),
      );
      if (!answer) {
        options.logger.warn(`the primary process did not answer: ${options.fallBack}`);
        return undefined;
      }
      return answer.waitSeconds ?? 0;
    },
    close: () => primary.close(),
  };
}

/**
 * The primary's side: answers one worker's steps on `channel` from the one throttle every worker shares. A step that
 * fails is answered 0: a throttle that cannot count lets the request through rather than lock everyone out.
 */
export function serveThrottleOnPrimary<Step extends string>(options: {
  channel: string;
  steps: readonly Step[];
  answer: (step: Step, subject: readonly string[]) => Promise<number>;
  send: (message: ThrottleMessage<Step>) => void;
}): (message: unknown) => void {
  const isStep = (kind: string): kind is Step => (options.steps as readonly string[]).includes(kind);
  return (message) => {
    if (!isThrottleMessage(options.channel, message) || !isStep(message.kind)) return;
    const { id, kind, subject = [] } = message;
    const reply = (waitSeconds: number) => options.send({ channel: options.channel, id, kind: 'answer', waitSeconds });
    void options.answer(kind, subject).then(reply, () => reply(0));
  };
}
