/**
 * A worker's questions to the primary over the cluster's IPC channel: each message numbered, its answer found by the
 * same number. A question the primary does not answer within the timeout (or that cannot be sent) resolves to
 * undefined, so a worker never waits on a primary that is gone.
 */
export interface PrimaryQuestions<Answer> {
  ask(question: (id: number) => object): Promise<Answer | undefined>;
  /** Stops listening; questions still waiting resolve to undefined. */
  close(): void;
}

export function askPrimary<Answer extends { id: number }>(
  isAnswer: (message: unknown) => message is Answer,
  timeoutMs: number,
  channel: NodeJS.Process = process,
): PrimaryQuestions<Answer> {
  let nextId = 1;
  const waiting = new Map<number, (answer: Answer | undefined) => void>();
  const onMessage = (message: unknown) => {
    if (isAnswer(message)) waiting.get(message.id)?.(message);
  };
  channel.on('message', onMessage);
  return {
    ask: (question) =>
      new Promise((resolve) => {
        const id = nextId++;
        const done = (answer: Answer | undefined) => {
          clearTimeout(timer);
          waiting.delete(id);
          resolve(answer);
        };
        const timer = setTimeout(() => done(undefined), timeoutMs);
        waiting.set(id, done);
        if (!channel.send?.(question(id))) done(undefined);
      }),
    close: () => {
      channel.off('message', onMessage);
      for (const done of [...waiting.values()]) done(undefined);
    },
  };
}
