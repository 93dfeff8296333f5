import type { ServerResponse } from 'node:http';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, openConsolePage, signInToConsole } from './support/browser.js';
import { type ApiClient, accountId, createTestUser, signIn } from './support/console.js';
import { waitForLogRows } from './support/gateway.js';
import { useGatewayWithMock } from './support/gateway-fixture.js';

/**
 * Stored and reflected XSS in the console, in a real browser (Debian's Chromium): every string a tenant, a client of
 * /v1 or a provider controls and the console shows carries markup that would run script if it were ever put into the
 * page as HTML. Each page is checked three ways: no script ran (window.__pwned stays undefined, no dialog opened), no
 * element came from the text (no <img src=x>, no inline handler, no inline script), and the browser reported no
 * Content-Security-Policy violation (an injected inline handler the CSP blocked would still be a bug); and the text
 * shows literally.
 */

/** Markup that sets window.__pwned to `tag` if it is ever parsed as HTML; `tag` names the place it came from. */
const xss = (tag: string) => `<img src=x onerror="window.__pwned='${tag}'">${tag}`;
/** An e-mail address has no spaces: the same markup without them. */
const xssEmail = (tag: string) => `<img/src=x/onerror=window.__pwned='${tag}'>@${tag}.test`;

const payloads = {
  keyName: xss('key-name'),
  environment: xss('env'),
  tokenName: xss('token-name'),
  model: xss('model'),
  userAgent: xss('user-agent'),
  user: xss('user-field'),
  metadata: xss('metadata'),
  content: xss('content'),
  upstreamError: xss('upstream-error'),
  upstreamModel: xss('upstream-model'),
  memberEmail: xssEmail('member'),
  invitedEmail: xssEmail('invited'),
};

const setup = useGatewayWithMock({
  models: [
    { name: 'relabelled', provider: 'mock', upstream_model: payloads.upstreamModel, pricing: { input: 1, output: 2 } },
  ],
  upstreamHandlers: {
    // A provider whose error message is markup (an upstream is not trusted any more than a client).
    [payloads.upstreamModel]: (_request, response: ServerResponse) => {
      response.writeHead(400, { 'content-type': 'application/json' });
      response.end(
        JSON.stringify({
          error: { message: payloads.upstreamError, type: 'invalid_request_error', param: null, code: null },
        }),
      );
    },
  },
});

let browser: Browser;
let acme: string;
let owner: ApiClient;
let keyId: string;
let invitationPath: string;
const requestIds: Record<string, string> = {};
const pageErrors: string[] = [];
const dialogs: string[] = [];

async function newPage(): Promise<Page> {
  const { page } = await openConsolePage(browser, {
    origin: setup.gateway.url,
    errors: pageErrors,
    // The first session probe's 401, and the 4xx answers the reflected filters get on purpose.
    ignored: [/401/, /status of 4\d\d/],
  });
  page.on('dialog', (dialog) => {
    dialogs.push(dialog.message());
    void dialog.dismiss();
  });
  await page.addInitScript(() => {
    const seen: string[] = [];
    (window as unknown as { __violations: string[] }).__violations = seen;
    document.addEventListener('securitypolicyviolation', (event) =>
      seen.push(`${event.violatedDirective} ${event.blockedURI}`),
    );
  });
  return page;
}

/** The page shows each text literally, and nothing of what it shows ran or became markup. */
async function expectInert(page: Page, shown: string[]): Promise<void> {
  // Wait until the page shows what it reads: the text after the markup, which shows either way.
  for (const text of shown) {
    const tail = text.slice(text.lastIndexOf('>') + 1);
    await expect
      .poll(() => page.evaluate((wanted) => document.body.textContent?.includes(wanted) ?? false, tail), {
        message: `${page.url()} shows ${tail}`,
      })
      .toBe(true);
  }
  const state = await page.evaluate(() => ({
    pwned: (window as unknown as { __pwned?: string }).__pwned ?? null,
    violations: (window as unknown as { __violations: string[] }).__violations,
    injected: Array.from(document.querySelectorAll('img[src="x"], [onerror], [onload], script:not([src])')).map(
      (element) => element.outerHTML,
    ),
  }));
  expect(state, page.url()).toEqual({ pwned: null, violations: [], injected: [] });
  expect(dialogs).toEqual([]);
  for (const text of shown) {
    await expect
      .poll(() => page.evaluate((wanted) => document.body.textContent?.includes(wanted) ?? false, text), {
        message: `${page.url()} shows ${text}`,
      })
      .toBe(true);
  }
}

async function v1(path: string, key: string, body: unknown, headers: Record<string, string> = {}): Promise<string> {
  const response = await fetch(`${setup.gateway.baseUrl}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  await response.arrayBuffer();
  return response.headers.get('x-request-id') ?? '';
}

beforeAll(async () => {
  acme = await accountId(setup.gateway, 'acme');
  await createTestUser(setup.gateway, { email: 'root@operator.test', admin: true });
  await createTestUser(setup.gateway, { email: 'owner@acme.test', account: 'acme', role: 'owner' });
  await createTestUser(setup.gateway, { email: payloads.memberEmail, account: 'acme', role: 'member' });
  const admin = await signIn(setup.gateway, 'root@operator.test');
  expect(
    (await admin.request('PATCH', `/api/accounts/${acme}`, { logBodies: true, models: ['mock', 'relabelled'] })).status,
  ).toBe(200);
  owner = await signIn(setup.gateway, 'owner@acme.test');
  const created = await owner.request('POST', `/api/accounts/${acme}/keys`, {
    name: payloads.keyName,
    environment: payloads.environment,
  });
  expect(created.status).toBe(201);
  keyId = created.body.id;
  const key = created.body.key as string;
  expect((await owner.request('POST', '/api/tokens', { name: payloads.tokenName })).status).toBe(201);
  const invitation = await owner.request('POST', `/api/accounts/${acme}/invitations`, {
    email: payloads.invitedEmail,
    role: 'member',
  });
  expect(invitation.status).toBe(201);
  invitationPath = invitation.body.path;

  // What a client of /v1 controls: the model it names, its user agent, the user and metadata fields, the content.
  requestIds.unknownModel = await v1(
    '/chat/completions',
    key,
    {
      model: payloads.model,
      messages: [{ role: 'user', content: payloads.content }],
      user: payloads.user,
      metadata: { note: payloads.metadata },
    },
    { 'user-agent': payloads.userAgent },
  );
  requestIds.upstreamError = await v1('/chat/completions', key, {
    model: 'relabelled',
    messages: [{ role: 'user', content: 'hi' }],
    user: payloads.user,
  });
  requestIds.streamed = await v1(
    '/chat/completions',
    key,
    { model: 'mock', stream: true, messages: [{ role: 'user', content: payloads.content }], user: payloads.user },
    { 'user-agent': payloads.userAgent },
  );
  await waitForLogRows(setup.gateway, Object.values(requestIds));
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
});

describe('text that tenants, clients and providers control, shown by the console', () => {
  let page: Page;

  it('stays text on the keys, limits and settings pages', async () => {
    page = await newPage();
    await signInToConsole(page, setup.gateway.url, 'owner@acme.test');
    await page.goto(`${setup.gateway.url}/console/accounts/${acme}/keys`);
    await expectInert(page, [payloads.keyName, payloads.environment]);
    await page.goto(`${setup.gateway.url}/console/accounts/${acme}/limits`);
    await expectInert(page, [payloads.keyName]);
    await page.goto(`${setup.gateway.url}/console/settings`);
    await expectInert(page, [payloads.tokenName]);
  });

  it('stays text in the request log and every record of it, bodies and streams included', async () => {
    await page.goto(`${setup.gateway.url}/console/accounts/${acme}/logs?range=all`);
    await expectInert(page, [payloads.keyName, payloads.model]);
    await page.goto(`${setup.gateway.url}/console/accounts/${acme}/logs/${requestIds.unknownModel}`);
    await expectInert(page, [payloads.model, payloads.userAgent, payloads.keyName]);
    await page.goto(`${setup.gateway.url}/console/accounts/${acme}/logs/${requestIds.upstreamError}`);
    await expectInert(page, [payloads.upstreamError, payloads.upstreamModel]);
    // The bodies are pretty-printed JSON: the markup appears with its quotes escaped.
    await expectInert(page, [JSON.stringify(payloads.user).slice(1, -1)]);
    await page.goto(`${setup.gateway.url}/console/accounts/${acme}/logs/${requestIds.streamed}`);
    await expectInert(page, [payloads.userAgent, `Echo: ${JSON.stringify(payloads.content).slice(1, -1)}`]);
    await page.getByText('The events as streamed').click();
    await expectInert(page, [payloads.userAgent]);
  });

  it('stays text in usage charts, their tooltips and tables', async () => {
    for (const groupBy of ['key', 'model']) {
      await page.goto(`${setup.gateway.url}/console/accounts/${acme}/usage?groupBy=${groupBy}`);
      await expectInert(page, [groupBy === 'key' ? payloads.keyName : payloads.model]);
      // The newest bucket's tooltip (the arrow key from nothing selected) lists every series by its label.
      const chart = page.locator('figure.chart svg').first();
      await chart.focus();
      await page.keyboard.press('ArrowLeft');
      const shown = groupBy === 'key' ? payloads.keyName : payloads.model;
      await expect.poll(() => page.getByRole('tooltip').first().textContent()).toContain(shown);
      await expectInert(page, []);
    }
  });

  it('stays text on the members page', async () => {
    await page.goto(`${setup.gateway.url}/console/accounts/${acme}/members`);
    await expectInert(page, [payloads.memberEmail, payloads.invitedEmail]);
  });

  it('stays text when a crafted link puts markup in the log filters (reflected)', async () => {
    const query = new URLSearchParams({
      model: xss('filter-model'),
      provider: xss('filter-provider'),
      requestId: xss('filter-request'),
      key: keyId,
      range: 'all',
    });
    await page.goto(`${setup.gateway.url}/console/accounts/${acme}/logs?${query}`);
    await expectInert(page, []);
    // The 404's message echoes the id it was given.
    await page.goto(`${setup.gateway.url}/console/accounts/${acme}/logs/${encodeURIComponent(xss('path'))}`);
    await expect.poll(() => page.getByRole('alert').textContent()).toContain(xss('path'));
    await expectInert(page, [xss('path')]);
  });

  it("stays text on the operator's pages", async () => {
    const admin = await newPage();
    await signInToConsole(admin, setup.gateway.url, 'root@operator.test');
    await admin.goto(`${setup.gateway.url}/console/admin/users`);
    await expectInert(admin, [payloads.memberEmail]);
    await admin.goto(`${setup.gateway.url}/console/admin/logs?range=all`);
    await expectInert(admin, [payloads.model, payloads.keyName]);
    await admin.goto(`${setup.gateway.url}/console/admin/usage?groupBy=key`);
    await expectInert(admin, [payloads.keyName]);
  });

  it('stays text on the invitation page', async () => {
    const invited = await newPage();
    await invited.goto(`${setup.gateway.url}${invitationPath}`);
    await expectInert(invited, [payloads.invitedEmail]);
  });

  it('logged no errors in any page', () => {
    expect(pageErrors).toEqual([]);
  });
});
