import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../src/accounts/service.js';
import { jsonOf } from './support/gateway.js';
import { useGatewayWithMock } from './support/gateway-fixture.js';
import { writeTinyGguf } from './support/tiny-gguf.js';
import { waitFor } from './support/wait.js';

/**
 * The built-in model's queue is shared fairly across accounts, through the real gateway on a tiny random-weight
 * GGUF with one generation slot: one account floods it, another account's single request is served after a few
 * generations (by order, not by clock), and only the flooding account is refused when its own lane is full.
 */

let directory: string;
let quietKey: string;

const queuePerAccount = 8;

// Registered before the fixture, so it runs after the gateway closed (afterAll hooks run in reverse).
afterAll(() => {
  rmSync(directory, { recursive: true, force: true });
});

const setup = useGatewayWithMock(() => {
  directory = mkdtempSync(path.join(tmpdir(), 'switchboard-fair-'));
  const model = path.join(directory, 'tiny-long.gguf');
  writeTinyGguf(model, { contextLength: 2048 });
  return {
    providers: [
      {
        name: 'tiny-fair',
        type: 'local',
        model_path: model,
        max_concurrent: 1,
        queue_size: 32,
        queue_per_account: queuePerAccount,
        threads: 1,
      },
    ],
    models: [{ name: 'tiny-fair', provider: 'tiny-fair' }],
  };
});

beforeAll(async () => {
  await createAccount(setup.gateway.gateway.database.db, { name: 'quiet' });
  quietKey = (await setup.gateway.newKey({ account: 'quiet', name: 'app' })).key;
});

async function waiting(): Promise<number> {
  const metrics = await (await fetch(`${setup.gateway.url}/metrics`)).text();
  const match = metrics.match(/switchboard_provider_queue_waiting\{provider="tiny-fair"\} (\d+)/);
  return Number(match?.[1] ?? 0);
}

describe('local model: a fair queue across accounts', () => {
  it("serves another account's request after a few of a flood's generations, and refuses only the flood", async () => {
    const finished: Array<{ label: string; status: number; code: string | null }> = [];
    const ask = async (key: string, label: string) => {
      const response = await fetch(`${setup.gateway.baseUrl}/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          model: 'tiny-fair',
          messages: [{ role: 'user', content: `Say hello (${label})` }],
          max_tokens: 300,
          temperature: 0,
        }),
      });
      const body = await jsonOf(response);
      const answer = { label, status: response.status, code: (body.error?.code ?? null) as string | null };
      finished.push(answer);
      return answer;
    };
    // One request generating and queue_per_account waiting fill the flood's lane; the rest are refused at once.
    const flood = Array.from({ length: queuePerAccount + 5 }, (_, index) => ask(setup.gateway.key, `flood ${index}`));
    await waitFor('the flood to fill its lane', async () => (await waiting()) >= queuePerAccount, {
      timeoutMs: 20_000,
      intervalMs: 20,
    });

    const sentAt = finished.length;
    const quiet = await ask(quietKey, 'quiet');
    expect(quiet).toMatchObject({ status: 200 });
    const quietAt = finished.indexOf(quiet);
    await Promise.all(flood);
    const floodServed = (answers: typeof finished) =>
      answers.filter((answer) => answer.label.startsWith('flood') && answer.status === 200).length;
    // Round robin: the generation running when it arrived, at most one more of the flood's, then this one...
    expect(floodServed(finished.slice(sentAt, quietAt))).toBeLessThanOrEqual(2);
    // ...while most of the flood's queued requests were still waiting.
    expect(floodServed(finished.slice(quietAt + 1))).toBeGreaterThanOrEqual(queuePerAccount - 2);
    // Only the flooding account was refused, for going over its own lane.
    const refused = finished.filter((answer) => answer.status !== 200);
    expect(refused.length).toBeGreaterThan(0);
    expect(refused.every((answer) => answer.label.startsWith('flood') && answer.code === 'model_overloaded')).toBe(
      true,
    );
    expect(refused.every((answer) => answer.status === 503)).toBe(true);
  }, 120_000);
});
