import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, openConsolePage, signInToConsole } from './support/browser.js';
import { accountId, createTestUser } from './support/console.js';
import { startTestGateway, type TestGateway } from './support/gateway.js';
import { type MockUpstream, startMockUpstream } from './support/mock-openai-upstream.js';

/**
 * The console's limits page in a real browser (Debian's Chromium): a member of an account that may call a model
 * without prices reads, beside the budgets, that requests to that model are not capped by them.
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

describe('limits page', () => {
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
