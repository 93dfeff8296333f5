import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import OpenAI from 'openai';
import type { Browser, BrowserContext, Page, Request as PageRequest } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { laptop, launchChromium, openConsolePage, phone, signInToConsole } from './support/browser.js';
import { projectRoot } from './support/cli.js';
import { accountId, signIn as apiSignIn, createTestUser } from './support/console.js';
import { waitForLogRows } from './support/gateway.js';
import { useGatewayWithMock } from './support/gateway-fixture.js';
import { waitFor } from './support/wait.js';

/**
 * The console's spend pages in a real browser (Debian's Chromium): budgets and limits shown and edited within the
 * rules, the filtered log and usage exported and parsed, the cost chart with data and its tooltip, finding a request
 * by id and the new filters, the new key's code samples run as pasted, dialogs focusing their first field, and every
 * table inside its box at 1280×800 and 390×844. With UPDATE_SCREENSHOTS=1 the screenshots go to docs/console/.
 */

const run = promisify(execFile);
const updateScreenshots = process.env.UPDATE_SCREENSHOTS === '1';
const screenshots = updateScreenshots
  ? path.join(projectRoot, 'docs', 'console')
  : mkdtempSync(path.join(tmpdir(), 'switchboard-console-spend-shots-'));
const downloads = mkdtempSync(path.join(tmpdir(), 'switchboard-console-downloads-'));

let browser: Browser;
let acme: string;
const pageErrors: string[] = [];
const requestIds: string[] = [];
let checkout: { key: string; id: string };
/** Log rows of the account and of checkout-service, counted in the database once the requests are logged. */
let accountRows = 0;
let checkoutRows = 0;
let batch: { key: string; id: string };

function newPage(viewport = laptop): Promise<{ context: BrowserContext; page: Page }> {
  // 401: the first session probe; 403: an owner's limit above the operator's, refused on purpose below.
  const ignored = [/status of 40[13]/];
  return openConsolePage(browser, { origin: setup.gateway.url, errors: pageErrors, ignored, viewport });
}

const signIn = (page: Page, email: string) => signInToConsole(page, setup.gateway.url, email);

async function shoot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: path.join(screenshots, `${name}.png`), animations: 'disabled' });
}

/**
 * Waits until the page has what it asked for: no request of the page unanswered, no "Loading…" and no busy table, so
 * every table has its rows before it is measured. Requests are counted from `trackRequests`, called before navigating.
 */
async function waitForSettled(page: Page, inFlight: () => number): Promise<void> {
  const pending = () =>
    page
      .evaluate(() => document.querySelectorAll('.loading, [aria-busy="true"]').length)
      .then((shown) => shown + inFlight());
  await expect.poll(pending, { timeout: 10_000 }).toBe(0);
}

/** How many of the page's requests are unanswered, from now on. */
function trackRequests(page: Page): () => number {
  const open = new Set<PageRequest>();
  page.on('request', (request) => open.add(request));
  page.on('requestfinished', (request) => open.delete(request));
  page.on('requestfailed', (request) => open.delete(request));
  return () => open.size;
}

/** Every table's box against its container's, and the page against the window: nothing may stick out sideways. */
async function overflowingTables(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const problems: string[] = [];
    if (document.documentElement.scrollWidth > window.innerWidth) {
      problems.push(`page ${document.documentElement.scrollWidth} > ${window.innerWidth}`);
    }
    for (const wrap of Array.from(document.querySelectorAll<HTMLElement>('main .table-wrap'))) {
      if (wrap.closest('details:not([open])') || wrap.closest('.chart-data')) continue;
      const table = wrap.querySelector('table');
      if (table && table.scrollWidth > wrap.clientWidth) {
        problems.push(`${table.getAttribute('aria-label') ?? 'table'}: ${table.scrollWidth} > ${wrap.clientWidth}`);
      }
    }
    return problems;
  });
}

/** RFC 4180 CSV (quoted fields, doubled quotes, line breaks inside quotes): what a spreadsheet reads. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let index = 0; index < text.length; index++) {
    const character = text[index];
    if (quoted) {
      if (character === '"' && text[index + 1] === '"') {
        field += '"';
        index++;
      } else if (character === '"') quoted = false;
      else field += character;
    } else if (character === '"') quoted = true;
    else if (character === ',') {
      row.push(field);
      field = '';
    } else if (character === '\n' || character === '\r') {
      if (character === '\r' && text[index + 1] === '\n') index++;
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
    } else field += character;
  }
  if (field !== '' || row.length > 0) {
    row.push(field);
    rows.push(row);
  }
  return rows;
}

async function download(page: Page, name: string): Promise<{ text: string; filename: string }> {
  const [file] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name }).click()]);
  const target = path.join(downloads, `${Date.now()}-${file.suggestedFilename()}`);
  await file.saveAs(target);
  return { text: readFileSync(target, 'utf8'), filename: file.suggestedFilename() };
}

const setup = useGatewayWithMock({
  // A configured default for keys, shown with its value wherever a key leaves the limit unset.
  config: { limits: { key_defaults: { concurrent_requests: 50 } } },
  models: [{ name: 'claude-sonnet', provider: 'mock', upstream_model: 'mock', pricing: { input: 3, output: 15 } }],
});

beforeAll(async () => {
  mkdirSync(screenshots, { recursive: true });
  acme = await accountId(setup.gateway, 'acme');
  await setup.gateway.gateway.database.db
    .updateTable('accounts')
    .set({ allowed_models: JSON.stringify(['gpt-4o-mini', 'claude-sonnet', 'mock', 'error-500']), log_bodies: 1 })
    .where('id', '=', acme)
    .execute();
  await createTestUser(setup.gateway, { email: 'alice@acme.test', account: 'acme', role: 'owner' });
  await createTestUser(setup.gateway, { email: 'mary@acme.test', account: 'acme', role: 'member' });
  await createTestUser(setup.gateway, { email: 'root@operator.test', admin: true });
  checkout = await setup.gateway.newKey({ name: 'checkout-service' });
  batch = await setup.gateway.newKey({ name: 'batch-jobs' });
  await setup.gateway.gateway.database.db
    .updateTable('api_keys')
    .set({ environment: 'production' })
    .where('id', '=', checkout.id)
    .execute();
  browser = await launchChromium();

  const sdk = (key: string) => new OpenAI({ baseURL: setup.gateway.baseUrl, apiKey: key, maxRetries: 0 });
  // Keys created behind the server's back are picked up by its change feed: wait until both are accepted.
  await waitFor('both new keys to be accepted', async () => {
    const accepted = await Promise.all(
      [batch, checkout].map((created) =>
        sdk(created.key)
          .models.list()
          .then(
            () => true,
            () => false,
          ),
      ),
    );
    return accepted.every(Boolean);
  });
  // More rows than one page of the log (50), from two keys and three models, a stream and some failures.
  for (let index = 0; index < 56; index++) {
    const completion = await sdk(index % 2 ? checkout.key : batch.key)
      .chat.completions.create({
        model: index % 3 === 0 ? 'claude-sonnet' : 'gpt-4o-mini',
        messages: [{ role: 'user', content: `request number ${index} with a somewhat longer prompt` }],
      })
      .withResponse();
    requestIds.push(completion.response.headers.get('x-request-id') ?? '');
  }
  const { data: stream, response: streamResponse } = await sdk(batch.key)
    .chat.completions.create({
      model: 'claude-sonnet',
      messages: [{ role: 'user', content: 'Stream please' }],
      stream: true,
    })
    .withResponse();
  for await (const _chunk of stream) {
    // read to the end, as an application would
  }
  requestIds.push(streamResponse.headers.get('x-request-id') ?? '');
  const failed = await sdk(checkout.key)
    .chat.completions.create({ model: 'error-500', messages: [{ role: 'user', content: 'x' }] })
    .catch((error: InstanceType<typeof OpenAI.APIError>) => error);
  requestIds.push((failed as InstanceType<typeof OpenAI.APIError>).requestID ?? '');
  await waitForLogRows(setup.gateway, requestIds);
  // The waits for the keys above made a few /v1/models calls of their own: count what the log holds.
  const rows = await setup.gateway.gateway.database.db
    .selectFrom('request_log')
    .select(['key_id'])
    .where('account_id', '=', acme)
    .execute();
  accountRows = rows.length;
  checkoutRows = rows.filter((row) => row.key_id === checkout.id).length;
});

afterAll(async () => {
  await browser?.close();
  rmSync(downloads, { recursive: true, force: true });
  if (!updateScreenshots) rmSync(screenshots, { recursive: true, force: true });
});

describe('console spend pages in a browser', () => {
  it('lets the operator set the account budget, and shows its spend against it with the reset time', async () => {
    const { context, page } = await newPage();
    await signIn(page, 'root@operator.test');
    await page.goto(`${setup.gateway.url}/console/accounts/${acme}/limits`);
    await page.getByRole('heading', { name: 'Limits and budgets' }).waitFor();
    // Unset limits read as the configured default they follow, with its value.
    const checkoutRow = page.locator(`tr[data-key-id="${checkout.id}"]`);
    await expect
      .poll(() => checkoutRow.locator('[data-label="Concurrent requests"]').textContent())
      .toBe('Default: 50');
    expect(await page.locator('[data-limit="tokensPerMinute"] dd').textContent()).toBe('Default: no limit');
    await page.getByRole('button', { name: 'Edit account limits' }).click();
    const dialog = page.getByRole('dialog', { name: 'Limits of account acme' });
    // The first field has the focus, not the dialog's close button.
    await dialog.waitFor();
    await expect
      .poll(() => page.evaluate(() => document.activeElement?.closest('label')?.textContent ?? ''))
      .toContain('Requests per minute');
    await dialog.getByLabel('Daily budget').fill('5');
    await dialog.getByLabel('Requests per minute').fill('600');
    await dialog.getByRole('button', { name: 'Save limits' }).click();
    await dialog.waitFor({ state: 'detached' });

    const budgets = await (await apiSignIn(setup.gateway, 'root@operator.test')).request(
      'GET',
      `/api/accounts/${acme}/budgets`,
    );
    const daily = budgets.body.account.budgets.find((budget: { period: string }) => budget.period === 'day');
    expect(daily.limitUsd).toBe(5);
    expect(daily.spentUsd).toBeGreaterThan(0);
    const bar = page.locator('[data-budget="day"]').first();
    await expect.poll(() => bar.textContent()).toContain('of $5.00');
    expect(Number(await bar.locator('meter').getAttribute('value'))).toBeCloseTo(daily.spentUsd, 9);
    expect(await bar.textContent()).toMatch(/Resets in \d+ (hours?|minutes?)/);
    expect(await page.locator('[data-limit="requestsPerMinute"]').textContent()).toContain('600');
    expect(await page.getByRole('heading', { name: 'At a limit' }).locator('..').textContent()).toContain(
      'insufficient_quota',
    );

    // The operator bounds checkout-service's daily budget at $1.
    await page.getByRole('button', { name: 'Edit limits of checkout-service' }).click();
    const keyDialog = page.getByRole('dialog', { name: 'Limits of "checkout-service"' });
    await keyDialog.getByLabel('Daily budget').fill('1');
    await keyDialog.getByRole('button', { name: 'Save limits' }).click();
    await keyDialog.waitFor({ state: 'detached' });
    await expect.poll(() => page.locator(`tr[data-key-id="${checkout.id}"]`).textContent()).toContain('of $1.00');
    await context.close();
  });

  it("lets an owner tighten a key's budget below the operator's, not loosen it, and shows members the limits read-only", async () => {
    const { context, page } = await newPage();
    await signIn(page, 'alice@acme.test');
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
    await page.getByRole('button', { name: 'Limits of checkout-service' }).click();
    const dialog = page.getByRole('dialog', { name: 'Limits of "checkout-service"' });
    await expect.poll(() => dialog.textContent()).toContain("At most $1.00: the operator's bound.");
    // Above the operator's bound the field itself refuses the value (the browser's own validation)…
    await dialog.getByLabel('Daily budget').fill('2');
    await dialog.getByRole('button', { name: 'Save limits' }).click();
    expect(
      await dialog.getByLabel('Daily budget').evaluate((input) => (input as HTMLInputElement).validity.rangeOverflow),
    ).toBe(true);
    // …and removing it is refused by the server, whose reason reads as a sentence with the field in words.
    await dialog.getByLabel('Daily budget').fill('');
    await dialog.getByRole('button', { name: 'Save limits' }).click();
    await expect
      .poll(() => dialog.getByRole('alert').textContent())
      .toMatch(/^The daily budget is bounded by the operator at \$1: .*\.$/);
    await dialog.getByLabel('Daily budget').fill('0.5');
    await dialog.getByRole('button', { name: 'Save limits' }).click();
    await dialog.waitFor({ state: 'detached' });
    const row = page.locator(`tr[data-key-id="${checkout.id}"]`);
    await expect.poll(() => row.locator('[data-budget="day"]').textContent()).toContain('of $0.50');
    // Each key's spend and requests over the last 30 days.
    const keysUsage = await (await apiSignIn(setup.gateway, 'alice@acme.test')).request(
      'GET',
      `/api/accounts/${acme}/usage/keys?days=30`,
    );
    const checkoutUsage = keysUsage.body.keys.find((key: { keyId: string }) => key.keyId === checkout.id);
    expect(checkoutUsage.requests).toBe(checkoutRows);
    expect(await row.getByTestId('key-spend').textContent()).toContain(`${checkoutRows} requests`);
    await shoot(page, 'keys-spend');
    await page.getByRole('link', { name: 'Limits and budgets' }).click();
    await page.getByRole('heading', { name: 'Limits and budgets' }).waitFor();
    await expect.poll(() => page.locator(`tr[data-key-id="${checkout.id}"]`).textContent()).toContain('of $0.50');
    await shoot(page, 'limits');
    await context.close();

    const { context: maryContext, page: mary } = await newPage();
    await signIn(mary, 'mary@acme.test');
    await mary.goto(`${setup.gateway.url}/console/accounts/${acme}/limits`);
    await expect.poll(() => mary.locator(`tr[data-key-id="${checkout.id}"]`).textContent()).toContain('of $0.50');
    expect(await mary.getByRole('button', { name: /Edit/ }).count()).toBe(0);
    await mary.getByRole('link', { name: 'API keys' }).click();
    await mary.getByRole('heading', { name: 'API keys' }).waitFor();
    expect(await mary.getByRole('button', { name: /^Limits of/ }).count()).toBe(0);
    await maryContext.close();
  });

  it('exports the filtered log as CSV and JSON Lines that list exactly the rows on screen', async () => {
    const { context, page } = await newPage();
    await signIn(page, 'alice@acme.test');
    await page.goto(`${setup.gateway.url}/console/accounts/${acme}/logs?key=${checkout.id}`);
    await page.getByRole('heading', { name: 'Request log' }).waitFor();
    // The key's rows, all of them on one page, once the filtered page has replaced whatever was shown first.
    await expect.poll(() => page.locator('tbody tr').count()).toBe(checkoutRows);
    await expect
      .poll(async () => new Set(await page.locator('td[data-label="Key"]').allTextContents()))
      .toEqual(new Set(['checkout-service']));
    expect(await page.getByRole('button', { name: 'Load older requests' }).count()).toBe(0);
    const onScreen = await page
      .locator('tbody tr')
      .evaluateAll((rows) => rows.map((row) => row.getAttribute('data-request-id')));
    expect(onScreen).toHaveLength(checkoutRows);

    const csv = await download(page, 'Export CSV');
    expect(csv.filename).toMatch(/\.csv$/);
    const [header, ...records] = parseCsv(csv.text);
    const column = (name: string) => header?.indexOf(name) ?? -1;
    expect(column('request_id')).toBeGreaterThanOrEqual(0);
    expect(records.map((record) => record[column('request_id')])).toEqual(onScreen);
    expect(new Set(records.map((record) => record[column('key_id')]))).toEqual(new Set([checkout.id]));

    const jsonl = await download(page, 'Export JSON Lines');
    const entries = jsonl.text
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { requestId: string; keyName: string });
    expect(entries.map((entry) => entry.requestId)).toEqual(onScreen);
    expect(entries.every((entry) => entry.keyName === 'checkout-service')).toBe(true);
    await context.close();
  });

  it('finds a request by its x-request-id, and filters by provider, endpoint, key environment and latency', async () => {
    const { context, page } = await newPage();
    await signIn(page, 'alice@acme.test');
    await page.getByRole('link', { name: 'Request log' }).click();
    await page.getByRole('heading', { name: 'Request log' }).waitFor();
    const wanted = requestIds[3] ?? '';
    await page.getByLabel('Find a request by its id (x-request-id)').fill(wanted);
    await page.getByRole('button', { name: 'Find' }).click();
    await expect.poll(() => page.locator('tbody tr').count()).toBe(1);
    expect(await page.locator('tbody tr').getAttribute('data-request-id')).toBe(wanted);
    await page.getByRole('button', { name: 'Clear' }).click();
    await expect.poll(() => page.locator('tbody tr').count()).toBe(50);

    await page.getByLabel('Key environment').fill('production');
    await page.getByLabel('Key environment').press('Enter');
    await expect.poll(() => page.url()).toContain('environment=production');
    await expect.poll(() => page.locator('tbody tr').count()).toBe(checkoutRows);
    expect(new Set(await page.locator('td[data-label="Key"]').allTextContents())).toEqual(
      new Set(['checkout-service']),
    );

    await page.getByLabel('Provider').selectOption('mock');
    await page.getByLabel('Endpoint').selectOption('chat_completions');
    await expect.poll(() => page.url()).toContain('provider=mock');
    // checkout-service's chat completions: its rows but the /v1/models calls.
    const chatRows = await setup.gateway.gateway.database.db
      .selectFrom('request_log')
      .select('id')
      .where('key_id', '=', checkout.id)
      .where('endpoint', '=', 'chat_completions')
      .execute();
    await expect.poll(() => page.locator('tbody tr').count()).toBe(chatRows.length);
    await page.getByLabel('Slower than (ms)').fill('600000');
    await page.getByLabel('Slower than (ms)').press('Enter');
    await page.getByText('No requests match these filters.').waitFor();
    expect(page.url()).toContain('minLatencyMs=600000');
    await page.getByLabel('Slower than (ms)').fill('0');
    await page.getByLabel('Slower than (ms)').press('Enter');
    await expect.poll(() => page.locator('tbody tr').count()).toBe(chatRows.length);
    await context.close();
  });

  it('draws the cost chart with data and a tooltip, and exports the usage table', async () => {
    const { context, page } = await newPage();
    await signIn(page, 'alice@acme.test');
    await page.getByRole('link', { name: 'Usage' }).click();
    await page.getByRole('heading', { name: 'Usage' }).waitFor();
    const cost = page.locator('figure.chart', { has: page.locator('figcaption', { hasText: 'Cost by model' }) });
    await expect.poll(() => cost.locator('svg rect[fill]').count()).toBeGreaterThan(0);
    expect(await cost.locator('.legend').textContent()).toContain('claude-sonnet');
    // Every chart has a tooltip: point at the newest bar of the cost chart (not the last hour, which may have just
    // begun with nothing in it).
    await cost.scrollIntoViewIfNeeded();
    const box = await cost.locator('svg').boundingBox();
    const newestBar = await cost.locator('svg rect[fill]').last().boundingBox();
    if (!box || !newestBar) throw new Error('no chart box');
    await page.mouse.move(newestBar.x + newestBar.width / 2, box.y + box.height / 2);
    const tooltip = cost.getByRole('tooltip');
    await expect.poll(() => tooltip.textContent()).toContain('claude-sonnet');
    expect(await tooltip.textContent()).toMatch(/Total\$0\.\d+/);
    for (const chart of await page.locator('figure.chart svg').all()) {
      await chart.scrollIntoViewIfNeeded();
      const chartBox = await chart.boundingBox();
      if (!chartBox) throw new Error('no chart box');
      await page.mouse.move(chartBox.x + chartBox.width - 14, chartBox.y + chartBox.height / 2);
      await expect.poll(() => chart.locator('xpath=..').getByRole('tooltip').count()).toBe(1);
    }
    // Axis text is drawn at 12 px, not scaled down.
    expect(
      await cost
        .locator('text.axis')
        .first()
        .evaluate((text) => getComputedStyle(text).fontSize),
    ).toBe('12px');
    // Below the sticky top bar, for the screenshot.
    await cost.evaluate((figure) => window.scrollBy(0, figure.getBoundingClientRect().top - 140));
    const again = await cost.locator('svg').boundingBox();
    if (!again) throw new Error('no chart box');
    await page.mouse.move(again.x + again.width - 14, again.y + again.height / 2);
    await shoot(page, 'usage-cost');

    const tile = await page.locator('.tile:has(.tile-label:text-is("Requests")) .tile-value').textContent();
    const csv = await download(page, 'Export CSV');
    const [header, ...records] = parseCsv(csv.text);
    const requestsColumn = header?.indexOf('requests') ?? -1;
    expect(requestsColumn).toBeGreaterThan(0);
    const total = records.reduce((sum, record) => sum + Number(record[requestsColumn]), 0);
    expect(String(total)).toBe(tile);
    expect(total).toBe(accountRows);
    await context.close();
  });

  it('shows the new key with the base URL and code samples that work as pasted', async () => {
    const { context, page } = await newPage();
    await signIn(page, 'alice@acme.test');
    await page.getByRole('button', { name: 'Create key' }).click();
    const create = page.getByRole('dialog', { name: 'Create an API key' });
    // The dialog opens on its first field.
    await create.waitFor();
    await expect
      .poll(() => page.evaluate(() => document.activeElement?.getAttribute('placeholder')))
      .toBe('e.g. checkout-service');
    await page.keyboard.type('sample-app');
    await create.getByRole('button', { name: 'Create key' }).click();
    const shown = page.getByRole('dialog', { name: 'Key "sample-app" created' });
    const key = await shown.getByTestId('one-time-secret').inputValue();
    expect(await shown.getByTestId('api-base-url').inputValue()).toBe(`${setup.gateway.url}/v1`);
    await shoot(page, 'key-created-samples');

    const curl = await shown.getByTestId('code-sample').textContent();
    expect(curl).toContain(key);
    const curlOutput = await run('bash', ['-c', curl ?? '']);
    expect(JSON.parse(curlOutput.stdout).choices[0].message.content).toBe('Echo: Hello!');

    await shown.getByRole('tab', { name: 'JavaScript' }).click();
    const javascript = (await shown.getByTestId('code-sample').textContent()) ?? '';
    expect(javascript).toContain("import OpenAI from 'openai'");
    // Run from the project folder, where the openai package resolves, exactly as shown.
    const node = await run(process.execPath, ['--input-type=module', '-e', javascript], { cwd: projectRoot });
    expect(node.stdout.trim()).toBe('Echo: Hello!');
    await shown.getByRole('tab', { name: 'Python' }).click();
    expect(await shown.getByTestId('code-sample').textContent()).toContain(`base_url="${setup.gateway.url}/v1"`);
    await shown.getByRole('button', { name: 'I have stored the key' }).click();
    await shown.waitFor({ state: 'detached' });
    expect(await page.content()).not.toContain(key);
    await context.close();
  });

  for (const [size, viewport] of [
    ['1280×800', laptop],
    ['390×844', phone],
  ] as const) {
    it(`keeps every table inside its box at ${size}`, async () => {
      const { context, page } = await newPage(viewport);
      await signIn(page, 'root@operator.test');
      const inFlight = trackRequests(page);
      const pages = [
        `/admin/logs`,
        `/accounts/${acme}/logs`,
        `/accounts/${acme}/usage?groupBy=model`,
        `/accounts/${acme}/usage?groupBy=key&span=30d`,
        `/accounts/${acme}/keys`,
        `/accounts/${acme}/limits`,
        `/admin/accounts`,
        `/admin/usage?groupBy=account`,
        `/admin/users`,
        `/accounts/${acme}/models`,
        `/accounts/${acme}/members`,
      ];
      for (const target of pages) {
        await page.goto(`${setup.gateway.url}/console${target}`);
        await page.locator('main .table-wrap > table:visible').first().waitFor();
        await waitForSettled(page, inFlight);
        expect({ target, problems: await overflowingTables(page) }).toEqual({ target, problems: [] });
      }
      // An account's log after "Load older" (the rows of the second page widened the table once).
      await page.goto(`${setup.gateway.url}/console/accounts/${acme}/logs`);
      await page.getByRole('button', { name: 'Load older requests' }).click();
      // Every row of the account by now (the code samples above made two more).
      const rowsNow = await setup.gateway.gateway.database.db
        .selectFrom('request_log')
        .select('id')
        .where('account_id', '=', acme)
        .execute();
      await expect.poll(() => page.locator('tbody tr').count()).toBe(rowsNow.length);
      expect(await overflowingTables(page)).toEqual([]);
      const cost = page.locator('tbody tr').first().locator('td[data-label="Cost"]');
      const costBox = await cost.boundingBox();
      const mainBox = await page.locator('main').boundingBox();
      if (!costBox || !mainBox) throw new Error('no box');
      expect(costBox.x + costBox.width).toBeLessThanOrEqual(mainBox.x + mainBox.width);
      if (viewport === phone) {
        await page.goto(`${setup.gateway.url}/console/accounts/${acme}/usage?groupBy=model`);
        const totals = page.getByRole('table', { name: 'Totals per model' });
        await totals.waitFor();
        await totals.evaluate((table) => window.scrollBy(0, table.getBoundingClientRect().top - 160));
        await shoot(page, 'phone-usage');
      }
      await context.close();
    });
  }

  it('shows a streamed response assembled, every attempt of a failed request, and no upstream token claim without tokens', async () => {
    const { context, page } = await newPage();
    await signIn(page, 'alice@acme.test');
    const streamed = requestIds.at(-2) ?? '';
    await page.goto(`${setup.gateway.url}/console/accounts/${acme}/logs/${streamed}`);
    await page.getByRole('heading', { name: 'Bodies' }).waitFor();
    const response = page.locator('pre[data-body="Response body, assembled"]');
    const assembled = JSON.parse((await response.textContent()) ?? '');
    expect(assembled.object).toBe('chat.completion');
    expect(assembled.choices[0].message.content).toBe('Echo: Stream please');
    expect(await page.getByText(/^Streamed as \d+ events/).count()).toBe(1);

    const failed = requestIds.at(-1) ?? '';
    await page.goto(`${setup.gateway.url}/console/accounts/${acme}/logs/${failed}`);
    const attempts = page.getByRole('table', { name: 'Attempts' });
    await attempts.waitFor();
    // The default retry policy: the first attempt and two retries, each on the model's one deployment.
    const stored = (
      await (await apiSignIn(setup.gateway, 'alice@acme.test')).request('GET', `/api/accounts/${acme}/logs/${failed}`)
    ).body.attempts as Array<{ deployment: string; status: number }>;
    expect(stored.length).toBeGreaterThan(1);
    await expect.poll(() => attempts.locator('tbody tr').count()).toBe(stored.length);
    expect(await attempts.locator('tbody tr').first().textContent()).toContain(stored[0]?.deployment ?? '?');
    expect(await attempts.locator('tbody tr').first().textContent()).toContain(String(stored[0]?.status));
    expect(await page.locator('.details').first().textContent()).toContain('None: no model produced tokens');
    expect(await page.locator('.details').first().textContent()).not.toContain('Reported by the upstream');
    await shoot(page, 'request-attempts');
    await context.close();
  });

  it('tells apart a rotated key and its successor, keeps the account in the switcher, and offers a disabled account no new keys', async () => {
    const owner = await apiSignIn(setup.gateway, 'alice@acme.test');
    const rotated = await owner.request('POST', `/api/accounts/${acme}/keys/${batch.id}/rotate`, {
      gracePeriodSeconds: 3600,
    });
    expect(rotated.status).toBe(200);
    const successor = new OpenAI({ baseURL: setup.gateway.baseUrl, apiKey: rotated.body.key, maxRetries: 0 });
    // The rotation is seen through the change feed: wait until the successor is served (an error is retried).
    const successorRequest = await waitFor('the successor key to be served', async () => {
      const completion = await successor.chat.completions
        .create({ model: 'mock', messages: [{ role: 'user', content: 'new key' }] })
        .withResponse();
      return completion.response.headers.get('x-request-id');
    });
    await waitForLogRows(setup.gateway, [successorRequest]);
    const { context, page } = await newPage();
    await signIn(page, 'alice@acme.test');
    await page.goto(`${setup.gateway.url}/console/accounts/${acme}/logs`);
    const newRow = page.locator(`tr[data-request-id="${successorRequest}"] td[data-label="Key"]`);
    const oldRow = page.locator(`tr[data-request-id="${requestIds.at(-2)}"] td[data-label="Key"]`);
    await expect.poll(() => newRow.textContent()).toBe(`batch-jobs …${rotated.body.key.slice(-4)}`);
    await expect.poll(() => oldRow.textContent()).toBe(`batch-jobs …${batch.key.slice(-4)}`);

    // Settings is outside any account: the switcher keeps showing the account the sidebar shows.
    await page.getByRole('link', { name: 'Settings and tokens' }).click();
    await page.getByRole('heading', { name: 'Settings' }).waitFor();
    expect(await page.locator('.account-switcher select option:checked').textContent()).toBe('acme');
    expect(await page.locator('.sidebar .nav-heading').first().textContent()).toBe('acme');
    await context.close();

    const { createAccount, setAccountFlags } = await import('../src/accounts/service.js');
    const initech = await createAccount(setup.gateway.gateway.database.db, { name: 'initech', models: ['mock'] });
    await setAccountFlags(setup.gateway.gateway.database.db, initech.id, { disabled: true });
    const { context: operatorContext, page: operator } = await newPage();
    await signIn(operator, 'root@operator.test');
    // The operator's log of all accounts tells them apart too (from the keys its page brings).
    await operator.goto(`${setup.gateway.url}/console/admin/logs`);
    const operatorRow = operator.locator(`tr[data-request-id="${successorRequest}"] td[data-label="Key"]`);
    await expect.poll(() => operatorRow.textContent()).toBe(`batch-jobs …${rotated.body.key.slice(-4)}`);
    await operator.goto(`${setup.gateway.url}/console/accounts/${initech.id}/keys`);
    await operator.getByText('Keys cannot be created while the account is disabled.').waitFor();
    expect(await operator.getByRole('button', { name: 'Create key' }).count()).toBe(0);
    await operatorContext.close();
  });

  it('logged no errors in any page', () => {
    expect(pageErrors).toEqual([]);
  });
});
