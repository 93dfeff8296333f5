import type { ServerResponse } from 'node:http';
import { answerFor, type MockUpstream } from './mock-openai-upstream.js';
import { waitFor } from './wait.js';

/**
 * The mock upstream holds every request for model `held` until the test releases it, so a test knows a request is in
 * flight (counted by the gateway, holding its concurrency lease and token reservation) instead of sleeping and hoping.
 */
export interface HeldRequests {
  /** Resolves once `count` requests have reached the upstream since this hold began. */
  arrived(count: number): Promise<void>;
  /** Answers every held request (and any that arrive later) normally. */
  releaseAll(): void;
}

export function holdRequests(mock: MockUpstream, model = 'held'): HeldRequests {
  const waiting: Array<() => void> = [];
  let arrivals = 0;
  let released = false;
  mock.on(model, (request, response: ServerResponse) => {
    arrivals++;
    const answer = () => {
      const content = answerFor(request.body);
      const body = JSON.stringify({
        id: 'chatcmpl-held',
        object: 'chat.completion',
        created: Math.floor(Date.now() / 1000),
        model,
        choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 5, completion_tokens: 5, total_tokens: 10 },
      });
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      response.end(body);
    };
    if (released) answer();
    else waiting.push(answer);
  });
  return {
    arrived: async (count) => {
      await waitFor(`${count} held request(s) to reach the upstream`, () => arrivals >= count);
    },
    releaseAll: () => {
      released = true;
      for (const answer of waiting.splice(0)) answer();
    },
  };
}
