import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, openConsolePage, signInToConsole } from './support/browser.js';
import { accountId, createTestUser } from './support/console.js';
import { chatBody, postChat, startTestGateway, type TestGateway, waitForLogRows } from './support/gateway.js';
import { type MockUpstream, startMockUpstream } from './support/mock-openai-upstream.js';

/**
 * The console in a real browser (Debian's Chromium) for an account that may call a model without prices: a member
 * reads, beside the budgets, that requests to that model are not capped by them, and in the request log why such a
 * request's cost is "–".
 */

let mock: MockUpstream;
let gateway: TestGateway;
let browser: Browser;
const pageErrors: string[] = [];

beforeAll(async () => {
  mock = await startMockUpstream();
  gateway = await startTestGateway({
    mock,
    models: [{ name: 'unpriced-model', provider: 'mock', upstream_model: 'mock' }],
    config: { limits: { key_defaults: { daily_budget_usd: 5 } } },
  });
  await createTestUser(gateway, { email: 'member@acme.test', account: 'acme', role: 'member' });
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await gateway?.close();
  await mock?.close();
});

describe('a model without prices', () => {
  it("says in the request log why a request's cost is unknown", async () => {
    const ids: string[] = [];
    for (const model of ['unpriced-model', 'gpt-4o-mini']) {
      const response = await postChat(gateway, chatBody(model));
      expect(response.status).toBe(200);
      ids.push(response.headers.get('x-request-id') as string);
    }
    const list = await fetch(`${gateway.baseUrl}/models`, { headers: { authorization: `Bearer ${gateway.key}` } });
    expect(list.status).toBe(200);
    ids.push(list.headers.get('x-request-id') as string);
    await waitForLogRows(gateway, ids);
    const [unpricedId, pricedId, listId] = ids as [string, string, string];
    const { context, page } = await openConsolePage(browser, {
      origin: gateway.url,
      errors: pageErrors,
      ignored: [/401/],
    });
    try {
      await signInToConsole(page, gateway.url, 'member@acme.test');
      await page.goto(`${gateway.url}/console/accounts/${await accountId(gateway, 'acme')}/logs`);
      const cost = (requestId: string) => page.locator(`tr[data-request-id="${requestId}"] td[data-label="Cost"]`);
      await cost(unpricedId).waitFor();
      // Pointing at "–" says why; a priced request shows its cost.
      const unpriced = cost(unpricedId).locator('[data-cost-unknown]');
      expect(await unpriced.textContent()).toBe('–');
      expect(await unpriced.getAttribute('title')).toBe(
        'No price configured for model unpriced-model (deployment mock/mock): it counts as $0 against budgets.',
      );
      expect(await cost(pricedId).textContent()).toMatch(/^\$0\.0000\d\d$/);
      expect(await cost(listId).locator('[data-cost-unknown]').getAttribute('title')).toContain('No model was called');
      // The legend says it in words, naming the models as GET …/budgets' unpricedModels (and the limits page) do.
      const legend = (await page.locator('[data-cost-legend]').textContent()) ?? '';
      expect(legend).toContain('no price is configured for unpriced-model');
      expect(legend).toContain('called no model');
      expect(legend).not.toContain('gpt-4o-mini');
      // The request's own page says the same.
      await page.locator(`tr[data-request-id="${unpricedId}"] a`).first().click();
      await page.getByText('No price configured for model unpriced-model').waitFor();
      expect(pageErrors).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('names the models whose requests budgets do not count', async () => {
    const { context, page } = await openConsolePage(browser, {
      origin: gateway.url,
      errors: pageErrors,
      ignored: [/401/],
    });
    try {
      await signInToConsole(page, gateway.url, 'member@acme.test');
      await page.goto(`${gateway.url}/console/accounts/${await accountId(gateway, 'acme')}/limits`);
      await page.getByRole('heading', { name: 'Limits and budgets' }).waitFor();
      const note = page.locator('[data-unpriced-models]');
      await note.waitFor();
      const text = (await note.textContent()) ?? '';
      expect(text).toContain('unpriced-model');
      expect(text).not.toContain('gpt-4o-mini');
      expect(pageErrors).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
