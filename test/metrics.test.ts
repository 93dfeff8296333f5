import { describe, expect, it } from 'vitest';
import { chatBody, postChat } from './support/gateway.js';
import { useGatewayWithMock } from './support/gateway-fixture.js';

const setup = useGatewayWithMock();

describe('GET /metrics', () => {
  it('counts requests by route, status and model, times them, and never labels with what a client typed', async () => {
    await (await postChat(setup.gateway, chatBody('mock'))).text();
    await (await postChat(setup.gateway, chatBody('mock', { stream: true }))).text();
    await (await postChat(setup.gateway, chatBody('a-model-nobody-configured'))).text();
    // Refused by validation, it still asked for a configured model.
    await (await postChat(setup.gateway, chatBody('mock', { temperature: 7 }))).text();
    const text = await (await fetch(`${setup.gateway.url}/metrics`)).text();
    expect(text).toContain('switchboard_requests_total{route="chat_completions",status="200",model="mock"} 2');
    expect(text).toContain('switchboard_requests_total{route="chat_completions",status="404",model="other"} 1');
    expect(text).toContain('switchboard_requests_total{route="chat_completions",status="400",model="mock"} 1');
    expect(text).not.toContain('a-model-nobody-configured');
    expect(text).toMatch(/switchboard_request_duration_seconds_count\{route="chat_completions",stream="true"\} 1/);
    expect(text).toMatch(/switchboard_request_duration_seconds_count\{route="chat_completions",stream="false"\} 3/);
    expect(text).toMatch(/switchboard_time_to_first_token_seconds_count\{model="mock"\} 1/);
    expect(text).toContain('switchboard_request_log_queue_depth');
  });
});
