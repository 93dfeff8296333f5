import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import OpenAI from 'openai';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { laptop, launchChromium, openConsolePage, phone, signInToConsole } from './support/browser.js';
import { projectRoot } from './support/cli.js';
import { accountId, createTestUser, signIn as signInThroughApi, testPassword } from './support/console.js';
import { waitForLogRows } from './support/gateway.js';
import { useGatewayWithMock } from './support/gateway-fixture.js';
import { waitFor } from './support/wait.js';

/**
 * The console in a real browser (Debian's Chromium): sign in, create a key, use it with the openai SDK, find the
 * request in the log, rotate, revoke and see the key refused; a member of another account sees none of it.
 * Screenshots of every page are taken on every run; with UPDATE_SCREENSHOTS=1 they go to docs/console/, where
 * docs/console.md shows them, otherwise to a temporary folder (PNGs differ byte for byte from run to run, and a test run
 * should not leave the working tree changed).
 */

const updateScreenshots = process.env.UPDATE_SCREENSHOTS === '1';
const screenshots = updateScreenshots
  ? path.join(projectRoot, 'docs', 'console')
  : mkdtempSync(path.join(tmpdir(), 'switchboard-console-shots-'));

let browser: Browser;
let acme: string;
let globex: string;
/** Everything the pages logged as errors, apart from the expected 401 of the first session probe. */
const pageErrors: string[] = [];

/** A fresh browser context (its own cookies); `allowedErrors` are console errors this page causes on purpose. */
async function newPage(
  viewport = laptop,
  allowedErrors: RegExp[] = [],
): Promise<{ context: BrowserContext; page: Page }> {
  // The first GET /api/session of a page that is not signed in yet answers 401.
  const ignored = [/401/, ...allowedErrors];
  return openConsolePage(browser, { origin: setup.gateway.url, errors: pageErrors, ignored, viewport });
}

async function shoot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: path.join(screenshots, `${name}.png`), animations: 'disabled' });
}

const signIn = (page: Page, email: string) => signInToConsole(page, setup.gateway.url, email);

/** The log page refreshes on demand; the writer flushes every 50 ms in tests. */
async function waitForRow(page: Page, requestId: string): Promise<void> {
  const row = page.locator(`tr[data-request-id="${requestId}"]`);
  for (let attempt = 0; attempt < 20 && (await row.count()) === 0; attempt++) {
    await page.getByRole('button', { name: 'Refresh' }).click();
    await page.waitForTimeout(150);
  }
  await row.waitFor();
}

/** Calls the gateway the way an application would. */
function sdk(key: string): OpenAI {
  return new OpenAI({ baseURL: setup.gateway.baseUrl, apiKey: key, maxRetries: 0 });
}

/** Waits until the gateway refuses `key` as an application would see it (401 through the SDK). */
async function refusedSoon(key: string): Promise<void> {
  await waitFor('the key to be refused', async () => {
    try {
      await sdk(key).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
      return false;
    } catch (error) {
      if (error instanceof OpenAI.AuthenticationError) return true;
      throw error;
    }
  });
}

const setup = useGatewayWithMock({
  models: [
    {
      name: 'claude-sonnet',
      provider: 'mock',
      upstream_model: 'mock',
      context_window: 200000,
      pricing: { input: 3, output: 15 },
    },
  ],
});

beforeAll(async () => {
  mkdirSync(screenshots, { recursive: true });
  acme = await accountId(setup.gateway, 'acme');
  await setup.gateway.gateway.database.db
    .updateTable('accounts')
    .set({ allowed_models: JSON.stringify(['gpt-4o-mini', 'claude-sonnet', 'mock', 'error-500', 'error-429']) })
    .where('id', '=', acme)
    .execute();
  await createTestUser(setup.gateway, { email: 'alice@acme.test', account: 'acme', role: 'owner' });
  await createTestUser(setup.gateway, { email: 'root@operator.test', admin: true });
  const { createAccount } = await import('../src/accounts/service.js');
  globex = (await createAccount(setup.gateway.gateway.database.db, { name: 'globex', models: ['mock'] })).id;
  await createTestUser(setup.gateway, { email: 'bob@globex.test', account: 'globex', role: 'owner' });
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  if (!updateScreenshots) rmSync(screenshots, { recursive: true, force: true });
});

describe('console in a browser', () => {
  let alice: Page;
  let firstKey: string;
  let firstKeyDisplay: string;
  const requestIds: string[] = [];

  it('signs in', async () => {
    ({ page: alice } = await newPage());
    await alice.goto(`${setup.gateway.url}/console/`);
    await alice.getByRole('heading', { name: 'Sign in' }).waitFor();
    await shoot(alice, 'sign-in');
    await alice.getByLabel('E-mail address').fill('alice@acme.test');
    await alice.getByLabel('Password').fill('not the password');
    await alice.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => alice.getByRole('alert').textContent()).toContain('not correct');
    await alice.getByLabel('Password').fill(testPassword);
    await alice.getByRole('button', { name: 'Sign in' }).click();
    await alice.getByRole('heading', { name: 'API keys' }).waitFor();
    expect(alice.url()).toBe(`${setup.gateway.url}/console/accounts/${acme}/keys`);
    // The session cookie is HttpOnly: no script on the page can read it.
    expect(await alice.evaluate<string>('document.cookie')).toBe('');
  });

  it('creates a key, shown exactly once with a copy button and a warning', async () => {
    await alice.getByRole('button', { name: 'Create key' }).click();
    const dialog = alice.getByRole('dialog', { name: 'Create an API key' });
    await dialog.getByLabel('Name').fill('checkout-service');
    await dialog.getByLabel('Environment').fill('production');
    await dialog.getByLabel('Expires').selectOption('90');
    await shoot(alice, 'key-create');
    await dialog.getByRole('button', { name: 'Create key' }).click();
    const shown = alice.getByRole('dialog', { name: 'Key "checkout-service" created' });
    await shown.waitFor();
    firstKey = await shown.getByTestId('one-time-secret').inputValue();
    expect(firstKey).toMatch(/^sk-sb-[0-9A-Za-z]{49}$/);
    await expect.poll(() => shown.getByRole('note').textContent()).toContain('only time the key is shown');
    await shown.getByRole('button', { name: 'Copy', exact: true }).click();
    await expect.poll(() => shown.textContent()).toContain('Copied to the clipboard');
    expect(await alice.evaluate<string>('navigator.clipboard.readText()')).toBe(firstKey);
    await shoot(alice, 'key-created');
    // Escape does not dismiss a secret the user has not confirmed storing.
    await alice.keyboard.press('Escape');
    expect(await shown.isVisible()).toBe(true);
    await shown.getByRole('button', { name: 'I have stored the key' }).click();
    await shown.waitFor({ state: 'detached' });
    firstKeyDisplay = `sk-sb-…${firstKey.slice(-4)}`;
    const row = alice.getByRole('row', { name: /checkout-service/ });
    await expect.poll(() => row.textContent()).toContain(firstKeyDisplay);
    await expect.poll(() => row.textContent()).toContain('Active');
    // Once closed, the key is nowhere in the page or the browser's storage.
    expect(await alice.content()).not.toContain(firstKey);
    expect(
      await alice.evaluate<string>('JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage })'),
    ).toBe('{}{}');
  });

  it('lets an application use the key with the openai SDK, and the request appears in the log', async () => {
    const client = sdk(firstKey);
    const completion = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'Say hello' }],
    });
    expect(completion.choices[0]?.message.content).toBe('Echo: Say hello');
    requestIds.push(completion._request_id ?? '');
    const { data: stream, request_id: streamId } = await client.chat.completions
      .create({ model: 'claude-sonnet', messages: [{ role: 'user', content: 'Stream please' }], stream: true })
      .withResponse();
    for await (const _chunk of stream) {
      // drain the stream, as an application would
    }
    requestIds.push(streamId ?? '');
    const failure = await client.chat.completions
      .create({ model: 'error-500', messages: [{ role: 'user', content: 'x' }] })
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(OpenAI.APIError);
    // All three rows before the page is opened: the log is written every 50 ms, and a row whose request finished just
    // after one write waits for the next (the page once opened in between and listed two rows).
    await waitForLogRows(setup.gateway, [
      ...requestIds,
      (failure as InstanceType<typeof OpenAI.APIError>).requestID ?? '',
    ]);

    await alice.getByRole('link', { name: 'Request log' }).click();
    await alice.getByRole('heading', { name: 'Request log' }).waitFor();
    await waitForRow(alice, requestIds[0] ?? '');
    const row = alice.locator(`tr[data-request-id="${requestIds[0]}"]`);
    const text = (await row.textContent()) ?? '';
    expect(text).toContain('checkout-service');
    expect(text).toContain('gpt-4o-mini');
    expect(text).toContain('200');
    expect(await alice.locator('tbody tr').count()).toBe(3);
    await shoot(alice, 'request-log');

    await alice.getByLabel('Status').selectOption('error');
    await expect.poll(() => alice.locator('tbody tr').count()).toBe(1);
    expect(await alice.locator('tbody tr').first().textContent()).toContain('error-500');
    expect(alice.url()).toContain('status=error');
    await alice.getByLabel('Status').selectOption('');
    await expect.poll(() => alice.locator('tbody tr').count()).toBe(3);

    // Every row so far came through /v1/chat/completions; none through /v1/models.
    await alice.getByLabel('Endpoint').selectOption('models');
    await alice.getByText('No requests match these filters.').waitFor();
    expect(alice.url()).toContain('endpoint=models');
    await alice.getByLabel('Endpoint').selectOption('chat_completions');
    await expect.poll(() => alice.locator('tbody tr').count()).toBe(3);
    await alice.getByLabel('Endpoint').selectOption('');

    await row.getByRole('link').click();
    await alice.getByRole('heading', { name: 'Request' }).waitFor();
    await expect.poll(() => alice.locator('.details').textContent()).toContain('Reported by the upstream');
    expect(await alice.locator('.details').textContent()).toContain('/v1/chat/completions');
    expect(await alice.locator('main').textContent()).toContain(requestIds[0] ?? '');
    await shoot(alice, 'request-detail');
  });

  it('shows usage that agrees with the log, and the models the account may call', async () => {
    await alice.getByRole('link', { name: 'Usage' }).click();
    await alice.getByRole('heading', { name: 'Usage' }).waitFor();
    const tile = (label: string) => alice.locator(`.tile:has(.tile-label:text-is("${label}")) .tile-value`);
    await expect.poll(() => tile('Requests').textContent()).toBe('3');
    await expect.poll(() => tile('Errors').textContent()).toBe('1');
    expect(await alice.locator('figure.chart svg').count()).toBe(5);
    await shoot(alice, 'usage');
    await alice.getByLabel('Break down').selectOption('model');
    await expect.poll(() => alice.locator('.legend').first().textContent()).toContain('claude-sonnet');
    await shoot(alice, 'usage-per-model');

    await alice.getByRole('link', { name: 'Models' }).click();
    await alice.getByRole('heading', { name: 'Models' }).waitFor();
    const v1 = await sdk(firstKey).models.list();
    // The rows arrive after the heading (the page fetches them): wait for the table, do not read it once.
    await expect
      .poll(() => alice.locator('tbody tr td:first-child').allTextContents())
      .toEqual(v1.data.map((model) => model.id));
    expect(await alice.getByRole('row', { name: /claude-sonnet/ }).textContent()).toContain('200,000 tokens');
    await shoot(alice, 'models');
  });

  it('rotates the key: the new key is shown once, the exposed old key is refused', async () => {
    await alice.getByRole('link', { name: 'API keys' }).click();
    await alice.getByRole('button', { name: 'Rotate checkout-service' }).click();
    const dialog = alice.getByRole('dialog', { name: 'Rotate "checkout-service"' });
    await dialog.getByLabel('The old key stops working').selectOption('0');
    await shoot(alice, 'key-rotate');
    await dialog.getByRole('button', { name: 'Rotate key' }).click();
    const shown = alice.getByRole('dialog', { name: 'Key "checkout-service" rotated' });
    const newKey = await shown.getByTestId('one-time-secret').inputValue();
    expect(newKey).not.toBe(firstKey);
    await expect.poll(() => shown.textContent()).toContain('no longer works');
    await shoot(alice, 'key-rotated');
    await shown.getByRole('button', { name: 'I have stored the key' }).click();
    await refusedSoon(firstKey);
    const completion = await sdk(newKey).chat.completions.create({
      model: 'mock',
      messages: [{ role: 'user', content: 'new key' }],
    });
    expect(completion.choices[0]?.message.content).toBe('Echo: new key');

    await alice.getByRole('button', { name: 'Revoke checkout-service' }).click();
    const confirm = alice.getByRole('dialog', { name: 'Revoke "checkout-service"?' });
    await expect.poll(() => confirm.textContent()).toContain('cannot be undone');
    await shoot(alice, 'key-revoke');
    await confirm.getByRole('button', { name: 'Revoke key' }).click();
    await confirm.waitFor({ state: 'detached' });
    await refusedSoon(newKey);
    await alice.getByLabel(/Show revoked and expired keys/).check();
    await expect.poll(() => alice.locator('tbody').textContent()).toContain('Revoked');
    await shoot(alice, 'keys');
  });

  it('revokes a leaked key pasted as found, never showing it back', async () => {
    const leaked = await setup.gateway.newKey({ name: 'pasted-in-a-ticket' });
    await alice.getByRole('button', { name: 'Revoke a leaked key' }).click();
    const dialog = alice.getByRole('dialog', { name: 'Revoke a leaked key' });
    await dialog.getByLabel('The key (sk-sb-…)').fill(leaked.key);
    await dialog.getByRole('button', { name: 'Revoke key' }).click();
    await expect.poll(() => dialog.textContent()).toContain('Revoked "pasted-in-a-ticket"');
    expect(await dialog.textContent()).not.toContain(leaked.key.slice(6, -4));
    await refusedSoon(leaked.key);
    await dialog.getByRole('button', { name: 'Done' }).click();
  });

  it('invites a member, and shows settings with management tokens', async () => {
    await alice.getByRole('link', { name: 'Members' }).click();
    await alice.getByRole('heading', { name: 'Members' }).waitFor();
    await alice.getByLabel('E-mail address').fill('carol@acme.test');
    await alice.getByRole('button', { name: 'Create invitation link' }).click();
    const link = await alice
      .getByRole('dialog', { name: 'Invitation created' })
      .getByTestId('one-time-secret')
      .inputValue();
    expect(link).toMatch(new RegExp(`^${setup.gateway.url}/console/invitation#token=sbi_`));
    await shoot(alice, 'members-invite');
    await alice.getByRole('button', { name: 'Done' }).click();

    // Carol opens the link in her own browser, chooses a password, and lands in acme.
    const { context: carolContext, page: carol } = await newPage();
    await carol.goto(link);
    await carol.getByText('You are invited to join').waitFor();
    expect(carol.url()).not.toContain('token=');
    await carol.getByLabel(/Choose a password/).fill('carol password 1');
    await carol.getByLabel('Repeat the password').fill('carol password 1');
    await shoot(carol, 'invitation');
    await carol.getByRole('button', { name: 'Join acme' }).click();
    await carol.getByRole('heading', { name: 'API keys' }).waitFor();
    await carolContext.close();

    await alice.getByRole('link', { name: 'Settings and tokens' }).click();
    await alice.getByRole('heading', { name: 'Settings' }).waitFor();
    await alice.getByLabel('Name', { exact: true }).fill('deploy-script');
    // A double click creates one token: the button is disabled while the first request is in flight.
    await alice.getByRole('button', { name: 'Create token' }).dblclick();
    const token = await alice
      .getByRole('dialog', { name: 'Management token created' })
      .getByTestId('one-time-secret')
      .inputValue();
    expect(token).toMatch(/^sbm_/);
    await alice.getByRole('button', { name: 'I have stored the token' }).click();
    await shoot(alice, 'settings');

    // A new password revokes the management tokens, and the page says so (then back to the old one).
    const messages: string[] = [];
    for (const [current, next] of [
      [testPassword, 'alice has a new passphrase'],
      ['alice has a new passphrase', testPassword],
    ] as const) {
      await alice.getByLabel('Current password').fill(current);
      await alice.getByLabel(/^New password/).fill(next);
      await alice.getByLabel('Repeat the new password').fill(next);
      await alice.getByRole('button', { name: 'Change password' }).click();
      const status = alice.getByRole('status').filter({ hasText: 'Password changed' });
      await status.waitFor();
      messages.push((await status.textContent()) ?? '');
    }
    expect(messages[0]).toContain('1 management token revoked');
    const refused = await fetch(`${setup.gateway.url}/api/accounts`, { headers: { authorization: `Bearer ${token}` } });
    expect(refused.status).toBe(401);
  });

  it('says plainly when an owner has made as many invitations lately as allowed', async () => {
    // Alice's budget (console.invitation_limit_per_user, 30 an hour) spent through the API, revoked as it goes.
    const api = await signInThroughApi(setup.gateway, 'alice@acme.test');
    for (let index = 0; index < 40; index++) {
      const made = await api.request('POST', `/api/accounts/${acme}/invitations`, {
        email: `batch${index}@elsewhere.test`,
        role: 'member',
      });
      if (made.status === 429) break;
      expect(made.status).toBe(201);
      await api.request('DELETE', `/api/accounts/${acme}/invitations/${made.body.id}`);
    }
    // A page of its own: the browser logs the refused request (429), which this page expects.
    const { context, page } = await newPage(laptop, [/429/]);
    await signIn(page, 'alice@acme.test');
    await page.getByRole('link', { name: 'Members' }).click();
    await page.getByRole('heading', { name: 'Members' }).waitFor();
    await page.getByLabel('E-mail address').fill('one.more@acme.test');
    await page.getByRole('button', { name: 'Create invitation link' }).click();
    const alert = page.getByRole('alert').filter({ hasText: 'invitations' });
    await alert.waitFor();
    expect(await alert.textContent()).toMatch(
      /made as many invitations lately as the gateway allows\. Try again in \d+/,
    );
    await context.close();
  });

  it('is readable at phone width, with the navigation behind a Menu button', async () => {
    const { context, page } = await newPage(phone);
    await signIn(page, 'alice@acme.test');
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
    const overflow = () => page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
    expect(await overflow()).toBeLessThanOrEqual(0);
    expect(await page.getByRole('link', { name: 'Request log' }).isVisible()).toBe(false);
    await shoot(page, 'phone-keys');
    await page.getByRole('button', { name: 'Menu' }).click();
    await shoot(page, 'phone-menu');
    await page.getByRole('link', { name: 'Request log' }).click();
    await page.getByRole('heading', { name: 'Request log' }).waitFor();
    expect(await page.getByRole('button', { name: 'Menu' }).getAttribute('aria-expanded')).toBe('false');
    expect(await overflow()).toBeLessThanOrEqual(0);
    await shoot(page, 'phone-request-log');
    await context.close();
  });

  it('shows a member of another account none of it, signing in with the keyboard alone', async () => {
    const { context, page: bob } = await newPage(laptop, [/status of 404/]);
    await bob.goto(`${setup.gateway.url}/console/`);
    await bob.getByRole('heading', { name: 'Sign in' }).waitFor();
    await bob.keyboard.press('Tab');
    await bob.keyboard.type('bob@globex.test');
    await bob.keyboard.press('Tab');
    await bob.keyboard.type(testPassword);
    await bob.keyboard.press('Enter');
    await bob.getByRole('heading', { name: 'API keys' }).waitFor();
    expect(bob.url()).toContain(`/accounts/${globex}/keys`);
    const accounts = await bob.getByLabel('Account').locator('option').allTextContents();
    expect(accounts).toEqual(['globex']);
    expect(await bob.locator('main').textContent()).not.toContain('checkout-service');
    await bob.getByRole('link', { name: 'Request log' }).click();
    await bob.getByText('No requests match these filters.').waitFor();
    await shoot(bob, 'other-account');

    await bob.goto(`${setup.gateway.url}/console/accounts/${acme}/logs`);
    await bob.getByRole('heading', { name: 'Account not found' }).waitFor();
    const direct = await bob.evaluate(
      async ({ account, requestId }) => {
        const paths = [
          `/api/accounts/${account}/keys`,
          `/api/accounts/${account}/logs`,
          `/api/accounts/${account}/logs/${requestId}`,
          `/api/accounts/${account}/usage`,
        ];
        return Promise.all(paths.map(async (path) => (await fetch(path)).status));
      },
      { account: acme, requestId: requestIds[0] },
    );
    expect(direct).toEqual([404, 404, 404, 404]);
    const html = await bob.content();
    expect(html).not.toContain('checkout-service');
    expect(html).not.toContain(requestIds[0]);
    await context.close();
  });

  it('gives the operator the admin pages', async () => {
    const { context, page } = await newPage();
    await signIn(page, 'root@operator.test');
    await page.getByRole('link', { name: 'All accounts', exact: true }).click();
    await page.getByRole('heading', { name: 'All accounts' }).waitFor();
    await page.getByRole('button', { name: 'Edit globex' }).click();
    const dialog = page.getByRole('dialog', { name: 'Account globex' });
    await dialog.getByLabel(/Keep request and response bodies/).check();
    await shoot(page, 'admin-account-edit');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await dialog.waitFor({ state: 'detached' });
    await expect.poll(() => page.getByRole('row', { name: /globex/ }).textContent()).toContain('On');
    await shoot(page, 'admin-accounts');
    await page.getByRole('link', { name: 'Users' }).click();
    await page.getByRole('heading', { name: 'Users' }).waitFor();
    await expect.poll(() => page.locator('tbody').textContent()).toContain('bob@globex.test');
    await shoot(page, 'admin-users');
    // Disabling is confirmed first: it revokes the user's tokens for good, not just while they are disabled.
    const bobRow = page.getByRole('row', { name: /bob@globex\.test/ });
    await bobRow.getByRole('button', { name: 'Disable' }).click();
    const disable = page.getByRole('dialog', { name: 'Disable bob@globex.test?' });
    expect(await disable.textContent()).toContain('management tokens are revoked');
    await disable.getByRole('button', { name: 'Disable user' }).click();
    await disable.waitFor({ state: 'detached' });
    await expect.poll(() => bobRow.textContent()).toContain('disabled');
    await bobRow.getByRole('button', { name: 'Enable' }).click();
    await expect.poll(() => bobRow.textContent()).not.toContain('disabled');
    await page.getByRole('link', { name: 'Log, all accounts' }).click();
    await page.getByRole('heading', { name: 'Request log, all accounts' }).waitFor();
    await waitForRow(page, requestIds[0] ?? '');
    await shoot(page, 'admin-request-log');
    await context.close();
  });

  it('logged no errors in any page', () => {
    expect(pageErrors).toEqual([]);
  });
});
