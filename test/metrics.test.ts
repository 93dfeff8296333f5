import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chatBody, postChat, startTestGateway, type TestGateway } from './support/gateway.js';
import { type MockUpstream, startMockUpstream } from './support/mock-openai-upstream.js';

let mock: MockUpstream;
let gateway: TestGateway;

beforeAll(async () => {
  mock = await startMockUpstream();
  gateway = await startTestGateway({ mock });
});

afterAll(async () => {
  await gateway.close();
  await mock.close();
});

describe('GET /metrics', () => {
  it('counts requests by route, status and model, times them, and never labels with what a client typed', async () => {
    await (await postChat(gateway, chatBody('mock'))).text();
    await (await postChat(gateway, chatBody('mock', { stream: true }))).text();
    await (await postChat(gateway, chatBody('a-model-nobody-configured'))).text();
    const text = await (await fetch(`${gateway.url}/metrics`)).text();
    expect(text).toContain('switchboard_requests_total{route="chat_completions",status="200",model="mock"} 2');
    expect(text).toContain('switchboard_requests_total{route="chat_completions",status="404",model="other"} 1');
    expect(text).not.toContain('a-model-nobody-configured');
    expect(text).toMatch(/switchboard_request_duration_seconds_count\{route="chat_completions",stream="true"\} 1/);
    expect(text).toMatch(/switchboard_request_duration_seconds_count\{route="chat_completions",stream="false"\} 2/);
    expect(text).toMatch(/switchboard_time_to_first_token_seconds_count\{model="mock"\} 1/);
    expect(text).toContain('switchboard_request_log_queue_depth');
  });
});
