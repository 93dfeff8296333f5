import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, openConsolePage, signInToConsole } from './support/browser.js';
import { accountId, apiRequest, createTestUser, signIn, testPassword } from './support/console.js';
import { useGatewayWithMock } from './support/gateway-fixture.js';

/**
 * Cross-site request forgery against the console, in a real browser (Debian's Chromium): a signed-in owner visits
 * another site (served here at `localhost`, another site than the gateway's `127.0.0.1`), whose page submits forms
 * (text/plain with a JSON-looking body, urlencoded, multipart) and sends no-cors and CORS fetches with credentials to
 * every kind of state-changing route: create a key, change the password, sign out, sign in as the attacker. None may
 * change anything; the owner stays signed in as themselves.
 */

const setup = useGatewayWithMock();

let browser: Browser;
let attacker: Server;
let attackerOrigin: string;
let acme: string;
let hits = 0;

/** A form whose text/plain body reads as JSON: `{"name":"planted","pad":"="}`. */
const jsonForm = (id: string, action: string, json: Record<string, string>) => {
  const text = JSON.stringify({ ...json, pad: '' });
  const [name, value] = [text.slice(0, -2), '"}'];
  return `<iframe name="${id}-frame"></iframe>
<form id="${id}" method="POST" enctype="text/plain" target="${id}-frame" action="${action}">
  <input name='${name}' value='${value}'>
</form>`;
};

function attackPage(gateway: string): string {
  const keys = `${gateway}/api/accounts/${acme}/keys`;
  return `<!doctype html><html><body>
${jsonForm('plain-key', keys, { name: 'planted-plain' })}
${jsonForm('plain-password', `${gateway}/api/session/password`, { currentPassword: testPassword, newPassword: 'attacker chose this one' })}
${jsonForm('plain-sign-in', `${gateway}/api/session`, { email: 'mallory@evil.test', password: testPassword })}
<iframe name="url-frame"></iframe>
<form id="url-key" method="POST" target="url-frame" action="${keys}"><input name="name" value="planted-url"></form>
<iframe name="multi-frame"></iframe>
<form id="multi-key" method="POST" enctype="multipart/form-data" target="multi-frame" action="${keys}">
  <input name="name" value="planted-multipart">
</form>
<script>
  const results = [];
  window.done = (async () => {
    for (const id of ['plain-key', 'plain-password', 'plain-sign-in', 'url-key', 'multi-key']) {
      const form = document.getElementById(id);
      const frame = document.getElementsByName(form.target)[0];
      await new Promise((resolve) => { frame.onload = resolve; form.submit(); });
    }
    const attempts = [
      ['POST', ${JSON.stringify(keys)}, 'no-cors', '{"name":"planted-fetch"}'],
      ['POST', ${JSON.stringify(`${gateway}/api/session/password`)}, 'no-cors', '{"currentPassword":"x","newPassword":"y"}'],
      ['DELETE', ${JSON.stringify(`${gateway}/api/session`)}, 'cors', undefined],
      ['POST', ${JSON.stringify(keys)}, 'cors', '{"name":"planted-cors"}'],
    ];
    for (const [method, url, mode, body] of attempts) {
      try {
        const response = await fetch(url, {
          method, mode, body, credentials: 'include',
          headers: mode === 'cors' ? { 'content-type': 'application/json', 'x-csrf-token': 'guess' } : undefined,
        });
        results.push(method + ' ' + mode + ' ' + response.type + ' ' + response.status);
      } catch (error) {
        results.push(method + ' ' + mode + ' refused by the browser');
      }
    }
    return results;
  })();
</script>
</body></html>`;
}

beforeAll(async () => {
  acme = await accountId(setup.gateway, 'acme');
  await createTestUser(setup.gateway, { email: 'owner@acme.test', account: 'acme', role: 'owner' });
  await createTestUser(setup.gateway, { email: 'mallory@evil.test' });
  attacker = createServer((request, response) => {
    if (request.url === '/') hits++;
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    response.end(attackPage(setup.gateway.url));
  });
  await new Promise<void>((resolve) => attacker.listen(0, '127.0.0.1', resolve));
  attackerOrigin = `http://localhost:${(attacker.address() as AddressInfo).port}`;
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await new Promise<void>((resolve) => attacker?.close(() => resolve()));
});

describe('another site the signed-in owner visits', () => {
  it('cannot create keys, change the password, sign the owner out or in as someone else', async () => {
    expect(setup.gateway.url).toMatch(/^http:\/\/127\.0\.0\.1:/);
    const errors: string[] = [];
    const { page } = await openConsolePage(browser, {
      origin: setup.gateway.url,
      errors,
      ignored: [/./],
    });
    await signInToConsole(page, setup.gateway.url, 'owner@acme.test');
    const owner = await signIn(setup.gateway, 'owner@acme.test');
    const keysBefore = (await owner.request('GET', `/api/accounts/${acme}/keys`)).body;

    const evil = await page.context().newPage();
    // What reached the gateway and what it answered: the server's refusal, not only the browser's.
    const answered: string[] = [];
    evil.on('response', (response) => {
      if (response.url().startsWith(setup.gateway.url)) {
        answered.push(`${response.request().method()} ${new URL(response.url()).pathname} ${response.status()}`);
      }
    });
    evil.on('requestfailed', (request) => {
      if (request.url().startsWith(setup.gateway.url)) {
        answered.push(`${request.method()} ${new URL(request.url()).pathname} ${request.failure()?.errorText}`);
      }
    });
    await evil.goto(`${attackerOrigin}/`);
    const results = await evil.evaluate<string[]>('window.done');
    expect(hits).toBe(1);
    // The page learns nothing: no-cors answers are withheld (Cross-Origin-Resource-Policy), CORS ones are stopped
    // at the preflight.
    expect(results).toEqual([
      'POST no-cors refused by the browser',
      'POST no-cors refused by the browser',
      'DELETE cors refused by the browser',
      'POST cors refused by the browser',
    ]);
    // The forms' requests reached the gateway and were refused by it (as cross-site, or as not JSON); what the
    // browser saw of the answers was blocked besides (framing and cross-origin reads are forbidden).
    const statuses = answered.filter((line) => /\d{3}$/.test(line));
    expect(statuses.length, answered.join('\n')).toBeGreaterThanOrEqual(5);
    for (const line of statuses) expect(line).toMatch(/^POST .* (403|415)$/);
    await evil.close();

    expect((await owner.request('GET', `/api/accounts/${acme}/keys`)).body).toEqual(keysBefore);
    // Still signed in, as the owner, in the browser: the console works, and its session is the owner's.
    await page.reload();
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
    const session = await page.evaluate(async () => (await fetch('/api/session')).json());
    expect(session.user.email).toBe('owner@acme.test');
    // The password is still the owner's, and the attacker's was not set.
    expect(
      (
        await apiRequest(setup.gateway.url, 'POST', '/api/session', {
          body: { email: 'owner@acme.test', password: 'attacker chose this one' },
        })
      ).status,
    ).toBe(401);
    await signIn(setup.gateway, 'owner@acme.test', testPassword);
  });
});

describe('a session cookie another site under the domain planted', () => {
  it('is never used: the pages it would reach say to clear the cookies, and nothing runs as its session', async () => {
    const { page, context } = await openConsolePage(browser, { origin: setup.gateway.url, errors: [], ignored: [/./] });
    await signInToConsole(page, setup.gateway.url, 'owner@acme.test');
    const mallory = await signIn(setup.gateway, 'mallory@evil.test');
    // What a sibling subdomain can do: a cookie of the same name for a longer path, which the browser sends first.
    await context.addCookies([
      { name: 'switchboard_session', value: mallory.cookie ?? '', domain: '127.0.0.1', path: '/api/accounts' },
    ]);
    await page.goto(`${setup.gateway.url}/console/accounts/${acme}/keys`);
    await expect.poll(() => page.getByRole('alert').first().textContent()).toContain('Clear this site');
    const answer = await page.evaluate(async (account) => {
      const response = await fetch(`/api/accounts/${account}/keys`);
      return { status: response.status, body: await response.json() };
    }, acme);
    expect(answer.status).toBe(400);
    expect(answer.body.error.code).toBe('ambiguous_session_cookie');
  });
});
