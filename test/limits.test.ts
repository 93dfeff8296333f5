import { describe, expect, it } from 'vitest';
import { createAccount, setAccountLimits } from '../src/accounts/service.js';
import { runCliJson } from './support/cli.js';
import { chatBody, postChat, startTestGateway, waitForLogRows } from './support/gateway.js';
import { useGatewayWithMock } from './support/gateway-fixture.js';
import { holdRequests } from './support/held-requests.js';
import { expectOpenAiError } from './support/openai-error.js';
import { waitFor } from './support/wait.js';

/** Rate limits and budgets on one node (in-process counters; the Redis-backed limiter has its own tests). */

const setup = useGatewayWithMock();

const as = (key: string) => ({ authorization: `Bearer ${key}` });

describe('requests per minute', () => {
  it('admits the limit, then 429 rate_limit_exceeded with retry-after, retry-after-ms and x-ratelimit headers', async () => {
    const { key } = await setup.gateway.newKey({ name: 'rpm-3', limits: { requestsPerMinute: 3 } });
    const remaining: string[] = [];
    for (let index = 0; index < 3; index++) {
      const response = await postChat(setup.gateway, chatBody('mock'), as(key));
      expect(response.status).toBe(200);
      expect(response.headers.get('x-ratelimit-limit-requests')).toBe('3');
      expect(response.headers.get('x-ratelimit-reset-requests')).toMatch(/^(\d+m)?\d+(ms|s)$/);
      remaining.push(response.headers.get('x-ratelimit-remaining-requests') as string);
    }
    expect(remaining).toEqual(['2', '1', '0']);
    const refused = await postChat(setup.gateway, chatBody('mock'), as(key));
    const retryAfter = Number(refused.headers.get('retry-after'));
    const retryAfterMs = Number(refused.headers.get('retry-after-ms'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(retryAfterMs).toBeGreaterThan(0);
    expect(retryAfterMs).toBeLessThanOrEqual(60_000);
    expect(refused.headers.get('x-ratelimit-remaining-requests')).toBe('0');
    const error = await expectOpenAiError(refused, 429);
    expect(error).toMatchObject({ code: 'rate_limit_exceeded', type: 'requests' });
    expect(error.message).toContain('requests per minute (limit 3)');
    // Streams count too.
    expect((await postChat(setup.gateway, chatBody('mock', { stream: true }), as(key))).status).toBe(429);
  });

  it("reports the same limits in Anthropic's headers on /v1/messages, refusals included", async () => {
    const { key } = await setup.gateway.newKey({
      name: 'rpm-2-messages',
      limits: { requestsPerMinute: 2, tokensPerMinute: 5000 },
    });
    const postMessage = () =>
      fetch(`${setup.gateway.baseUrl}/messages`, {
        method: 'POST',
        headers: { ...as(key), 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
        body: JSON.stringify({ model: 'mock', max_tokens: 50, messages: [{ role: 'user', content: 'Say hello' }] }),
      });
    const before = Date.now();
    const answers = [await postMessage(), await postMessage()];
    for (const [index, answer] of answers.entries()) {
      expect(answer.status).toBe(200);
      expect(answer.headers.get('anthropic-ratelimit-requests-limit')).toBe('2');
      expect(answer.headers.get('anthropic-ratelimit-requests-remaining')).toBe(String(1 - index));
      expect(answer.headers.get('anthropic-ratelimit-tokens-limit')).toBe('5000');
      expect(Number(answer.headers.get('anthropic-ratelimit-tokens-remaining'))).toBeLessThan(5000);
      // RFC 3339 in whole seconds, within the minute window from now.
      const reset = answer.headers.get('anthropic-ratelimit-requests-reset') as string;
      expect(reset).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
      expect(Date.parse(reset)).toBeGreaterThanOrEqual(before);
      expect(Date.parse(reset)).toBeLessThanOrEqual(Date.now() + 61_000);
      await answer.arrayBuffer();
    }
    const refused = await postMessage();
    expect(refused.status).toBe(429);
    expect(refused.headers.get('anthropic-ratelimit-requests-remaining')).toBe('0');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(await refused.json()).toMatchObject({ type: 'error', error: { type: 'rate_limit_error' } });
    // A key without limits gets none of them.
    const unlimited = await fetch(`${setup.gateway.baseUrl}/messages`, {
      method: 'POST',
      headers: { ...as(setup.gateway.key), 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'mock', max_tokens: 50, messages: [{ role: 'user', content: 'Say hello' }] }),
    });
    expect(unlimited.status).toBe(200);
    for (const name of [
      'anthropic-ratelimit-requests-limit',
      'anthropic-ratelimit-tokens-limit',
      'x-ratelimit-limit-requests',
    ]) {
      expect(unlimited.headers.get(name)).toBeNull();
    }
  });

  it("shares an account limit between the account's keys", async () => {
    await createAccount(setup.gateway.gateway.database.db, { name: 'shared-rpm' });
    await setAccountLimits(setup.gateway.gateway.database.db, 'shared-rpm', { requestsPerMinute: 2 });
    const first = await setup.gateway.newKey({ account: 'shared-rpm', name: 'one' });
    const second = await setup.gateway.newKey({ account: 'shared-rpm', name: 'two' });
    expect((await postChat(setup.gateway, chatBody('mock'), as(first.key))).status).toBe(200);
    expect((await postChat(setup.gateway, chatBody('mock'), as(second.key))).status).toBe(200);
    const error = await expectOpenAiError(await postChat(setup.gateway, chatBody('mock'), as(first.key)), 429);
    expect(error.message).toContain('account shared-rpm');
  });
});

describe('tokens per minute', () => {
  it('reserves max_tokens on admission and settles to the real usage afterwards', async () => {
    const { key } = await setup.gateway.newKey({ name: 'tpm', limits: { tokensPerMinute: 1000 } });
    // Each request reserves ~900 tokens; the mock answers with ~20, so after settlement the next one fits.
    for (let index = 0; index < 4; index++) {
      const response = await postChat(setup.gateway, chatBody('mock', { max_tokens: 900 }), as(key));
      expect(response.status).toBe(200);
      expect(Number(response.headers.get('x-ratelimit-remaining-tokens'))).toBeLessThan(1000);
    }
  });

  it('refuses concurrent reservations beyond the limit', async () => {
    const { key } = await setup.gateway.newKey({ name: 'tpm-concurrent', limits: { tokensPerMinute: 1000 } });
    const held = holdRequests(setup.mock);
    const first = postChat(setup.gateway, chatBody('held', { max_tokens: 900 }), as(key));
    await held.arrived(1);
    const refused = await postChat(setup.gateway, chatBody('mock', { max_tokens: 900 }), as(key));
    const error = await expectOpenAiError(refused, 429);
    expect(error).toMatchObject({ type: 'tokens', code: 'rate_limit_exceeded' });
    held.releaseAll();
    expect((await first).status).toBe(200);
  });

  it('says a request larger than the whole allowance is too large, and not to retry', async () => {
    const { key } = await setup.gateway.newKey({ name: 'tpm-small', limits: { tokensPerMinute: 100 } });
    const response = await postChat(setup.gateway, chatBody('mock', { max_tokens: 500 }), as(key));
    expect(response.headers.get('x-should-retry')).toBe('false');
    const error = await expectOpenAiError(response, 429);
    expect(error.message).toContain('Request too large');
  });
});

describe('concurrent requests', () => {
  it('refuses a request beyond the concurrency limit and admits again once one finishes', async () => {
    const { key } = await setup.gateway.newKey({ name: 'one-at-a-time', limits: { concurrentRequests: 1 } });
    const held = holdRequests(setup.mock);
    const first = postChat(setup.gateway, chatBody('held'), as(key));
    await held.arrived(1);
    const second = await postChat(setup.gateway, chatBody('mock'), as(key));
    expect((await expectOpenAiError(second, 429)).message).toContain('concurrent requests (limit 1)');
    held.releaseAll();
    expect((await first).status).toBe(200);
    expect((await postChat(setup.gateway, chatBody('mock'), as(key))).status).toBe(200);
  });
});

describe('budgets', () => {
  it('stops at the daily budget with 429 insufficient_quota and x-should-retry: false, streams included', async () => {
    // Prices are $1 / $2 per million tokens: one request costs a few hundredths of a cent.
    const { key } = await setup.gateway.newKey({ name: 'budget', limits: { dailyBudgetUsd: 0.00004 } });
    const streamed = await postChat(setup.gateway, chatBody('mock', { stream: true, max_tokens: 5 }), as(key));
    await streamed.text();
    let status = 200;
    let response: Response | undefined;
    for (let index = 0; index < 5 && status === 200; index++) {
      response = await postChat(setup.gateway, chatBody('mock', { max_tokens: 5 }), as(key));
      status = response.status;
      if (status === 200) await response.text();
    }
    expect(status).toBe(429);
    expect(response?.headers.get('x-should-retry')).toBe('false');
    expect(response?.headers.get('retry-after')).toBeNull();
    const error = await expectOpenAiError(response as Response, 429);
    expect(error).toMatchObject({ type: 'insufficient_quota', code: 'insufficient_quota' });
    expect(error.message).toContain('daily budget of $0.00');
  });

  it('remembers what was spent across a restart (budgets start from the request log)', async () => {
    const other = await startTestGateway({ mock: setup.mock });
    const { key, id } = await other.newKey({ name: 'restart-budget', limits: { monthlyBudgetUsd: 0.00001 } });
    const response = await postChat(other, chatBody('mock'), as(key));
    await waitForLogRows(other, [response.headers.get('x-request-id') as string]);
    await other.gateway.close();
    const restarted = await startTestGateway({ mock: setup.mock, dataDir: other.dataDir, database: other.database });
    try {
      const refused = await postChat(restarted, chatBody('mock'), as(key));
      expect((await expectOpenAiError(refused, 429)).code).toBe('insufficient_quota');
      const rows = await restarted.gateway.database.db
        .selectFrom('request_log')
        .select('cost_usd')
        .where('key_id', '=', id)
        .execute();
      expect(rows.reduce((sum, row) => sum + Number(row.cost_usd), 0)).toBeGreaterThan(0.00001);
    } finally {
      await restarted.close();
      await other.database.drop();
    }
  });
});

describe('changing limits while the server runs', () => {
  it('applies limits set with the CLI while the server runs', async () => {
    const { key, id } = await setup.gateway.newKey({ name: 'cli-limits' });
    expect((await postChat(setup.gateway, chatBody('mock'), as(key))).status).toBe(200);
    await runCliJson(['keys', 'set-limits', id, '--rpm', '1', '--data-dir', setup.gateway.dataDir], {
      env: setup.gateway.cliEnv,
    });
    // How soon is the change poll's business (keys.change_poll_interval); the test waits for the effect.
    await waitFor('the new limit to refuse a request', async () => {
      const response = await postChat(setup.gateway, chatBody('mock'), as(key));
      await response.text();
      return response.status === 429;
    });
  });
});
