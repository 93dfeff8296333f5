import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accessChangesChannel } from '../src/access/change-feed.js';
import { createAccount } from '../src/accounts/service.js';
import { runCliJson } from './support/cli.js';
import { testRedisUrl } from './support/environment.js';
import { chatBody, postChat, startTestGateway, type TestGateway } from './support/gateway.js';
import { type MockUpstream, startMockUpstream } from './support/mock-openai-upstream.js';
import { writeConfigFile } from './support/serve-process.js';
import { waitFor } from './support/wait.js';

/**
 * docs/operations.md, "Many nodes": a change made on one node or with the CLI (a key's limits, an account disabled)
 * applies to new requests on the other node once Redis has carried it there. The database poll is set slower than any
 * wait here, so only the broadcast can make the change visible; the other node had the key cached before the change.
 */

let mock: MockUpstream;
let first: TestGateway;
let second: TestGateway;
let configFile: string;
const prefix = `propagation-${randomBytes(4).toString('hex')}:`;

beforeAll(async () => {
  mock = await startMockUpstream();
  const config = { redis: { url: testRedisUrl(), key_prefix: prefix }, keys: { change_poll_interval: '60s' } };
  first = await startTestGateway({ mock, config });
  second = await startTestGateway({ mock, config, dataDir: first.dataDir, database: first.database });
  configFile = writeConfigFile(path.join(first.dataDir, 'propagation-cli.yaml'), {
    redis: { url: testRedisUrl(), key_prefix: prefix },
  });
  // A message published to no subscriber is gone: both nodes must listen before the CLI speaks.
  const admin = new Redis(testRedisUrl());
  const listening = async () => ((await admin.pubsub('NUMSUB', accessChangesChannel(prefix))) as [string, number])[1];
  await waitFor('both nodes to subscribe to the change channel', async () => (await listening()) >= 2);
  admin.disconnect();
});
afterAll(async () => {
  await second?.close();
  await first?.close();
  await mock?.close();
});

const cli = (...args: string[]) =>
  runCliJson([...args, '--data-dir', first.dataDir, '--config', configFile], { env: first.cliEnv });

async function status(node: TestGateway, key: string): Promise<{ status: number; code: string | undefined }> {
  const response = await postChat(node, chatBody('mock'), { authorization: `Bearer ${key}` });
  const body = (await response.json()) as { error?: { code?: string } };
  return { status: response.status, code: body.error?.code };
}

describe('a change made elsewhere reaches the other node', () => {
  it("applies a key's new requests-per-minute limit there", async () => {
    const { key, id } = await first.newKey({ name: 'tightened' });
    expect((await status(second, key)).status).toBe(200);
    await cli('keys', 'set-limits', id, '--rpm', '2');
    // At most two more requests are admitted in this minute once the change is there.
    await waitFor('the other node to refuse the third request of the minute', async () => {
      const { status: answer, code } = await status(second, key);
      return answer === 429 && code === 'rate_limit_exceeded';
    });
  });

  it('refuses the keys of an account disabled there', async () => {
    const account = `disabled-${randomBytes(3).toString('hex')}`;
    await createAccount(first.gateway.database.db, { name: account });
    const { key } = await first.newKey({ account, name: 'soon-refused' });
    expect((await status(second, key)).status).toBe(200);
    await cli('accounts', 'disable', account);
    await waitFor('the other node to refuse the key', async () => (await status(second, key)).status === 403);
    expect((await status(second, key)).code).toBe('account_disabled');
    await cli('accounts', 'enable', account);
    await waitFor('the other node to accept the key again', async () => (await status(second, key)).status === 200);
  });
});
