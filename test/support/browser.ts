// Code the tests hand to page.evaluate runs in the browser, and the console's own modules that unit tests import
// (console/src/api.ts) are written for it: the type-check of the tests knows the DOM's types.
/// <reference lib="dom" />
import { existsSync } from 'node:fs';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { testPassword } from './console.js';

/**
 * Debian's Chromium driven by playwright-core; never a downloaded browser. scripts/test.sh installs the `chromium`
 * package when it is missing; CHROMIUM_PATH points elsewhere if needed. Playwright gives every launch a fresh
 * temporary profile (its own --user-data-dir), so no state carries over between runs.
 */
export const chromiumPath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(chromiumPath)) {
    throw new Error(
      `Chromium is not installed at ${chromiumPath}: run scripts/test.sh (it installs Debian's chromium package) or set CHROMIUM_PATH.`,
    );
  }
  return chromium.launch({
    executablePath: chromiumPath,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/** Signs `email` (with the test users' password) in to the console of the gateway at `url`, as a person would. */
export async function signInToConsole(page: Page, url: string, email: string): Promise<void> {
  await page.goto(`${url}/console/`);
  await page.getByLabel('E-mail address').fill(email);
  await page.getByLabel('Password').fill(testPassword);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
}

export const laptop = { width: 1280, height: 800 };
export const phone = { width: 390, height: 844 };

/**
 * A fresh browser context (its own cookies) for the console at `origin`, clipboard allowed. What the page throws and
 * the errors it logs go to `errors`, except logged errors that one of `ignored` matches (the 401 of the first session
 * probe, an error the test causes on purpose).
 */
export async function openConsolePage(
  browser: Browser,
  options: { origin: string; errors: string[]; ignored: RegExp[]; viewport?: { width: number; height: number } },
): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({
    viewport: options.viewport ?? laptop,
    reducedMotion: 'reduce',
    locale: 'en-GB',
    timezoneId: 'UTC',
    acceptDownloads: true,
  });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: options.origin });
  const page = await context.newPage();
  page.setDefaultTimeout(10_000);
  page.on('pageerror', (error) => options.errors.push(`pageerror: ${error.message}`));
  page.on('console', (message) => {
    const text = message.text();
    if (message.type() === 'error' && !options.ignored.some((ignored) => ignored.test(text))) options.errors.push(text);
  });
  return { context, page };
}
