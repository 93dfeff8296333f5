import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { setAccountFlags } from '../src/accounts/service.js';
import { generateKey } from '../src/keys/format.js';
import { revokeKey, rotateKey } from '../src/keys/service.js';
import { runCliJson } from './support/cli.js';
import { testEngine } from './support/database.js';
import { chatBody, jsonOf, postChat, upstreamSecret, waitForLogRows } from './support/gateway.js';
import { useGatewayWithMock } from './support/gateway-fixture.js';
import { waitFor } from './support/wait.js';

const setup = useGatewayWithMock();

/**
 * Runs `use` with the process's clock (Date, which the gateway in this process reads for key expiry) moved `ms`
 * ahead; timers stay real, so nothing else in the gateway is hurried. Time is the subject here, so it is controlled
 * rather than waited for.
 */
async function withClockAhead<T>(ms: number, use: () => Promise<T>): Promise<T> {
  vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + ms, shouldAdvanceTime: true });
  try {
    return await use();
  } finally {
    vi.useRealTimers();
  }
}

/** Waits until `key` is refused (a change made beside the server reaches it on its next change poll). */
async function refusedSoon(key: string): Promise<void> {
  await waitFor(`the key to be refused`, async () => {
    const response = await modelsWith({ authorization: `Bearer ${key}` });
    await response.arrayBuffer();
    return response.status === 401;
  });
}

async function modelsWith(headers: Record<string, string>) {
  return fetch(`${setup.gateway.baseUrl}/models`, { headers });
}

async function expect401(response: Response) {
  expect(response.status).toBe(401);
  expect(response.headers.get('content-type')).toBe('application/json');
  expect(response.headers.get('x-request-id')).toMatch(/^req_/);
  const body = await jsonOf(response);
  expect(body.error.type).toBe('invalid_request_error');
  expect(body.error.param).toBeNull();
  return body.error as { message: string; code: string | null };
}

describe('the Authorization header, exactly as the contract says', () => {
  it('missing header -> 401 saying no key was provided', async () => {
    const error = await expect401(await modelsWith({}));
    expect(error.message).toContain("You didn't provide an API key");
    expect(error.message).toContain('Authorization: Bearer');
  });

  it('only x-api-key -> 401 saying to use Bearer', async () => {
    const error = await expect401(await modelsWith({ 'x-api-key': setup.gateway.key }));
    expect(error.message).toContain('x-api-key header is not accepted');
    expect(error.message).toContain('Bearer');
    expect(error.message).not.toContain(setup.gateway.key);
  });

  it('other schemes -> 401 naming the scheme, never echoing the credential', async () => {
    const basic = await expect401(
      await modelsWith({ authorization: `Basic ${Buffer.from('user:pass').toString('base64')}` }),
    );
    expect(basic.message).toContain("'Basic' authorization scheme is not supported");
    expect(basic.message).not.toContain('dXNlcjpwYXNz');
    const lowercase = await expect401(await modelsWith({ authorization: `bearer ${setup.gateway.key}` }));
    expect(lowercase.message).toContain("'bearer'");
    expect(lowercase.message).not.toContain(setup.gateway.key.slice(6));
    const bare = await expect401(await modelsWith({ authorization: setup.gateway.key }));
    expect(bare.message).not.toContain(setup.gateway.key);
  });

  it('extra spaces or an empty key -> 401 explaining the exact form', async () => {
    const doubleSpace = await expect401(await modelsWith({ authorization: `Bearer  ${setup.gateway.key}` }));
    expect(doubleSpace.message).toContain('exactly one space');
    const trailing = await expect401(await modelsWith({ authorization: `Bearer ${setup.gateway.key} extra` }));
    expect(trailing.message).toContain('exactly one space');
    const empty = await expect401(await modelsWith({ authorization: 'Bearer ' }));
    expect(empty.message).toContain("You didn't provide an API key");
  });

  it('a malformed key (wrong checksum or shape) -> 401 invalid_api_key with a masked echo', async () => {
    const typo = `${setup.gateway.key.slice(0, 20)}${setup.gateway.key[20] === 'a' ? 'b' : 'a'}${setup.gateway.key.slice(21)}`;
    const error = await expect401(await modelsWith({ authorization: `Bearer ${typo}` }));
    expect(error.code).toBe('invalid_api_key');
    expect(error.message).toContain(`sk-sb-…${typo.slice(-4)}`);
    expect(error.message).toContain('not a well-formed');
    expect(error.message).not.toContain(typo.slice(6, -4));
    const openAiKey = await expect401(
      await modelsWith({ authorization: 'Bearer sk-proj-abcdefghijklmnopqrstuvwxyz0123' }),
    );
    expect(openAiKey.message).toContain('…0123');
    expect(openAiKey.message).not.toContain('abcdefghij');
  });

  it('an unknown key -> 401 invalid_api_key saying it does not exist', async () => {
    const stranger = generateKey();
    const error = await expect401(await modelsWith({ authorization: `Bearer ${stranger}` }));
    expect(error.code).toBe('invalid_api_key');
    expect(error.message).toContain('No such key exists');
    expect(error.message).toContain(`sk-sb-…${stranger.slice(-4)}`);
  });

  it('a revoked key -> 401 saying revoked; an expired key -> 401 saying expired', async () => {
    const revoked = await setup.gateway.newKey({ name: 'to-revoke' });
    await revokeKey(setup.gateway.gateway.database.db, revoked.id);
    await refusedSoon(revoked.key);
    const revokedResponse = await postChat(setup.gateway, chatBody('mock'), { authorization: `Bearer ${revoked.key}` });
    const refusalId = revokedResponse.headers.get('x-request-id') as string;
    const revokedError = await expect401(revokedResponse);
    expect(revokedError).toMatchObject({ code: 'invalid_api_key' });
    expect(revokedError.message).toContain('has been revoked');
    // The refusal is in the account's log: someone still using a revoked key is worth seeing.
    const [refusal] = await waitForLogRows(setup.gateway, [refusalId]);
    expect(refusal).toMatchObject({ key_id: revoked.id, status: 401, outcome: 'error', error_code: 'invalid_api_key' });

    const expiring = await setup.gateway.newKey({ name: 'short-lived', expiresInMs: 60_000 });
    expect((await modelsWith({ authorization: `Bearer ${expiring.key}` })).status).toBe(200);
    const expiredError = await withClockAhead(61_000, async () =>
      expect401(await modelsWith({ authorization: `Bearer ${expiring.key}` })),
    );
    expect(expiredError.message).toContain('expired at');
  });

  it('a disabled account -> 403 account_disabled', async () => {
    const other = await setup.gateway.newKey();
    await setAccountFlags(setup.gateway.gateway.database.db, 'acme', { disabled: true });
    try {
      const response = await waitFor('the disabled account to be refused', async () => {
        const answer = await modelsWith({ authorization: `Bearer ${other.key}` });
        if (answer.status !== 200) return answer;
        await answer.arrayBuffer();
        return false;
      });
      expect(response.status).toBe(403);
      expect((await jsonOf(response)).error.code).toBe('account_disabled');
    } finally {
      await setAccountFlags(setup.gateway.gateway.database.db, 'acme', { disabled: false });
      await waitFor(
        'the account to be served again',
        async () => (await modelsWith({ authorization: `Bearer ${other.key}` })).ok,
      );
    }
  });
});

describe('revocation and rotation reach the running server', () => {
  it('a key revoked by the CLI (another process) stops working while the server runs', async () => {
    const victim = await setup.gateway.newKey({ name: 'cli-revoke' });
    expect((await postChat(setup.gateway, chatBody('mock'), { authorization: `Bearer ${victim.key}` })).status).toBe(
      200,
    );
    await runCliJson(['keys', 'revoke', victim.id, '--data-dir', setup.gateway.dataDir], { env: setup.gateway.cliEnv });
    // How soon is keys.change_poll_interval's business (1 s by default); the test waits for the effect.
    await refusedSoon(victim.key);
  });

  it('account model changes from the CLI apply while the server runs, to /v1/models and to requests alike', async () => {
    const key = await setup.gateway.newKey({ name: 'models-change' });
    await runCliJson(['accounts', 'set-models', 'acme', 'mock,tools', '--data-dir', setup.gateway.dataDir], {
      env: setup.gateway.cliEnv,
    });
    try {
      const ids = await waitFor('the account to see only its two models', async () => {
        const body = await jsonOf(await modelsWith({ authorization: `Bearer ${key.key}` }));
        const listed: string[] = body.data.map((model: { id: string }) => model.id);
        return listed.length === 2 && listed;
      });
      expect(ids).toEqual(['mock', 'tools']);
      expect(
        (await postChat(setup.gateway, chatBody('gpt-4o-mini'), { authorization: `Bearer ${key.key}` })).status,
      ).toBe(404);
    } finally {
      await runCliJson(['accounts', 'set-models', 'acme', '*', '--data-dir', setup.gateway.dataDir], {
        env: setup.gateway.cliEnv,
      });
      await waitFor('every model to be back', async () => {
        const body = await jsonOf(await modelsWith({ authorization: `Bearer ${key.key}` }));
        return body.data.length > 2;
      });
    }
  });

  it('rotation with a grace period: both keys work, then only the new one', async () => {
    const old = await setup.gateway.newKey({ name: 'rotating' });
    const { created } = await rotateKey(setup.gateway.gateway.database.db, setup.gateway.secret, old.id, 3_600_000);
    // Within the hour of grace both keys work, however long the machine takes to get here.
    await waitFor(
      'the new key to be served',
      async () => (await modelsWith({ authorization: `Bearer ${created.key}` })).ok,
    );
    expect((await modelsWith({ authorization: `Bearer ${old.key}` })).status).toBe(200);
    const [oldAfterGrace, newAfterGrace] = await withClockAhead(3_600_000 + 1000, () =>
      Promise.all([
        modelsWith({ authorization: `Bearer ${old.key}` }),
        modelsWith({ authorization: `Bearer ${created.key}` }),
      ]),
    );
    expect(oldAfterGrace.status).toBe(401);
    expect(newAfterGrace.status).toBe(200);
  });
});

describe('secrets stay secret', () => {
  function filesUnder(directory: string): string[] {
    return readdirSync(directory).flatMap((name) => {
      const full = path.join(directory, name);
      return statSync(full).isDirectory() ? filesUnder(full) : [full];
    });
  }

  it('a used key (and the upstream key) appear nowhere in the data directory or the logs', async () => {
    const key = await setup.gateway.newKey({ name: 'needle' });
    const responses = [
      await postChat(setup.gateway, chatBody('mock'), { authorization: `Bearer ${key.key}` }),
      await postChat(setup.gateway, chatBody('mock', { stream: true }), { authorization: `Bearer ${key.key}` }),
      await postChat(setup.gateway, chatBody('error-500'), { authorization: `Bearer ${key.key}` }),
      await modelsWith({ authorization: `Basic ${key.key}` }),
      await modelsWith({ authorization: `Bearer  ${key.key}` }),
      await modelsWith({ 'x-api-key': key.key }),
    ];
    for (const response of responses) await response.arrayBuffer();
    await setup.gateway.gateway.dataPlane.idle();
    // Everything these requests write has been written: their log rows (the chat ones are logged) are in.
    const logged = responses.slice(0, 3).map((response) => response.headers.get('x-request-id') as string);
    expect(await waitForLogRows(setup.gateway, logged)).toHaveLength(3);
    const secretPart = key.key.slice(6, -4);
    for (const file of filesUnder(setup.gateway.dataDir)) {
      const bytes = readFileSync(file);
      expect(bytes.includes(secretPart), `${file} contains the key`).toBe(false);
      expect(bytes.includes(upstreamSecret), `${file} contains the upstream key`).toBe(false);
    }
    const logs = setup.gateway.logLines.join('');
    expect(logs).not.toContain(secretPart);
    expect(logs).not.toContain(upstreamSecret);
    // Whatever the engine, no table holds the key: every row of every table, as text.
    const db = setup.gateway.gateway.database.db;
    const tables = ['accounts', 'api_keys', 'access_changes', 'request_log'] as const;
    for (const table of tables) {
      const rows = await db.selectFrom(table).selectAll().execute();
      expect(JSON.stringify(rows), `table ${table}`).not.toContain(secretPart);
    }
  });

  it('the key secret, and on SQLite the database, are readable by their owner only', () => {
    // The data directory holds the key secret whatever the engine; only SQLite keeps the database there too.
    expect(statSync(path.join(setup.gateway.dataDir, 'key-secret')).mode & 0o077).toBe(0);
    if (testEngine === 'sqlite')
      expect(statSync(path.join(setup.gateway.dataDir, 'switchboard.db')).mode & 0o077).toBe(0);
  });

  it('sends no CORS headers by default', async () => {
    const response = await fetch(`${setup.gateway.baseUrl}/models`, {
      headers: { authorization: `Bearer ${setup.gateway.key}`, origin: 'https://evil.example' },
    });
    expect(response.headers.get('access-control-allow-origin')).toBeNull();
  });
});
