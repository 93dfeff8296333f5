import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../test/support/cli.js';
import { startTestGateway, type TestGateway } from '../test/support/gateway.js';
import { type MockAnthropicUpstream, startMockAnthropicUpstream } from '../test/support/mock-anthropic-upstream.js';
import { type MockUpstream, type RecordedRequest, startMockUpstream } from '../test/support/mock-openai-upstream.js';
import { waitFor } from '../test/support/wait.js';

/**
 * Claude Code end to end: the real `claude` (npm @anthropic-ai/claude-code, installed by scripts/setup-claude-code.sh)
 * in print mode, pointed at the gateway the way docs/claude-code.md says (ANTHROPIC_BASE_URL, ANTHROPIC_AUTH_TOKEN,
 * the model-name settings for a non-Claude model, its non-essential traffic off), answering through a translated
 * OpenAI-compatible mock upstream. Checks its answer, what reached the upstream, and the gateway's log rows.
 */

const claude = path.join(projectRoot, 'data', 'tools', 'claude-code', 'node_modules', '.bin', 'claude');
const answer = 'Switchboard relayed this answer.';
let mock: MockUpstream;
let anthropic: MockAnthropicUpstream;
let gateway: TestGateway;
let home: string;

/** The upstream model behind the test's models: a fixed answer, as chat JSON or a chat stream with usage. */
function answerChat(request: RecordedRequest, response: ServerResponse) {
  const model = String(request.body.model);
  const usage = { prompt_tokens: 1200, completion_tokens: 7, total_tokens: 1207 };
  const base = { id: 'chatcmpl-cc', created: 1_700_000_000, model };
  if (request.body.stream !== true) {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(
      JSON.stringify({
        ...base,
        object: 'chat.completion',
        choices: [{ index: 0, message: { role: 'assistant', content: answer }, finish_reason: 'stop' }],
        usage,
      }),
    );
    return;
  }
  response.writeHead(200, { 'content-type': 'text/event-stream' });
  const chunk = (data: Record<string, unknown>) =>
    response.write(`data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', ...data })}\n\n`);
  chunk({ choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] });
  for (const piece of answer.match(/.{1,8}/g) ?? []) {
    chunk({ choices: [{ index: 0, delta: { content: piece }, finish_reason: null }] });
  }
  chunk({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] });
  chunk({ choices: [], usage });
  response.end('data: [DONE]\n\n');
}

/**
 * A model that reads a file with Claude Code's own Read tool, then answers from what the tool returned: the tool call
 * goes to Claude Code as a tool_use block, Claude Code runs it, and its tool_result comes back as a tool message.
 */
function readThenAnswer(request: RecordedRequest, response: ServerResponse) {
  const messages = request.body.messages as Array<{ role: string; content: unknown }>;
  const last = messages.at(-1);
  const base = { id: 'chatcmpl-cc-tool', created: 1_700_000_000, model: 'cc-reader', object: 'chat.completion.chunk' };
  response.writeHead(200, { 'content-type': 'text/event-stream' });
  const chunk = (data: Record<string, unknown>) => response.write(`data: ${JSON.stringify({ ...base, ...data })}\n\n`);
  if (last?.role === 'tool') {
    const text = `The note says: ${String(last.content).includes(noteText) ? noteText : 'nothing I could read'}`;
    chunk({ choices: [{ index: 0, delta: { role: 'assistant', content: text }, finish_reason: null }] });
    chunk({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] });
  } else {
    const call = { id: 'call_read_1', type: 'function', function: { name: 'Read', arguments: '' } };
    const args = JSON.stringify({ file_path: path.join(home, 'note.txt') });
    chunk({
      choices: [{ index: 0, delta: { role: 'assistant', tool_calls: [{ index: 0, ...call }] }, finish_reason: null }],
    });
    for (const piece of args.match(/.{1,10}/g) ?? []) {
      chunk({
        choices: [
          { index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: piece } }] }, finish_reason: null },
        ],
      });
    }
    chunk({ choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] });
  }
  chunk({ choices: [], usage: { prompt_tokens: 900, completion_tokens: 20, total_tokens: 920 } });
  response.end('data: [DONE]\n\n');
}

const noteText = 'the gateway works end to end';

beforeAll(async () => {
  mock = await startMockUpstream();
  mock.on('cc-upstream', answerChat);
  mock.on('cc-reader', readThenAnswer);
  anthropic = await startMockAnthropicUpstream({ apiKey: 'sk-ant-gateway-own-key' });
  gateway = await startTestGateway({
    mock,
    providers: [{ name: 'claude', type: 'anthropic', base_url: anthropic.baseUrl, api_key: 'sk-ant-gateway-own-key' }],
    models: [
      { name: 'claude-sonnet-4-5', provider: 'claude', upstream_model: 'mock', pricing: { input: 3, output: 15 } },
      { name: 'cc-main', provider: 'mock', upstream_model: 'cc-upstream', pricing: { input: 1, output: 2 } },
      { name: 'cc-fast', provider: 'mock', upstream_model: 'cc-upstream', pricing: { input: 0.1, output: 0.2 } },
      { name: 'cc-reader', provider: 'mock', upstream_model: 'cc-reader' },
    ],
  });
  home = mkdtempSync(path.join(tmpdir(), 'switchboard-claude-code-'));
  writeFileSync(path.join(home, 'note.txt'), `${noteText}\n`);
});

afterAll(async () => {
  await gateway?.close();
  await mock?.close();
  await anthropic?.close();
  if (home) rmSync(home, { recursive: true, force: true });
});

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function runClaude(prompt: string, extraEnv: Record<string, string> = {}, extraArgs: string[] = []): Promise<Run> {
  // Nothing of the developer's own Claude Code set-up may leak in: a fresh HOME, and no Anthropic variables.
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith('ANTHROPIC_') && !name.startsWith('CLAUDE')),
  );
  const env = {
    ...inherited,
    HOME: home,
    CLAUDE_CONFIG_DIR: path.join(home, '.claude'),
    ANTHROPIC_BASE_URL: gateway.url,
    ANTHROPIC_AUTH_TOKEN: gateway.key,
    ANTHROPIC_MODEL: 'cc-main',
    ANTHROPIC_DEFAULT_OPUS_MODEL: 'cc-main',
    ANTHROPIC_DEFAULT_SONNET_MODEL: 'cc-main',
    ANTHROPIC_DEFAULT_HAIKU_MODEL: 'cc-fast',
    CLAUDE_CODE_SUBAGENT_MODEL: 'cc-main',
    CLAUDE_CODE_MAX_OUTPUT_TOKENS: '4096',
    // Offline: no telemetry, error reports, update checks or other calls beside the gateway.
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_TELEMETRY: '1',
    DISABLE_ERROR_REPORTING: '1',
    ...extraEnv,
  };
  return new Promise((resolve) => {
    const child = execFile(
      claude,
      ['-p', prompt, ...extraArgs],
      { cwd: home, env, timeout: 120_000 },
      (error, stdout, stderr) => {
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
      },
    );
    // The prompt is the argument: an open stdin would make it wait for piped input first.
    child.stdin?.end();
  });
}

describe.skipIf(!existsSync(claude) && process.env.CI !== 'true')(
  'Claude Code through the gateway (a non-Claude model, translated)',
  () => {
    it('answers `claude -p`, lists the models for its discovery, and logs its requests', async () => {
      const startedAt = Date.now();
      const run = await runClaude('Say hello through the gateway.', {
        CLAUDE_CODE_ENABLE_GATEWAY_MODEL_DISCOVERY: '1',
      });
      expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
      expect(run.stdout.trim()).toBe(answer);

      // What reached the upstream: Claude Code's prompt, translated to chat, for the configured model.
      const chats = mock.requests.filter((request) => request.body.model === 'cc-upstream');
      expect(chats.length).toBeGreaterThan(0);
      const main = chats.find((request) => JSON.stringify(request.body.messages).includes('Say hello through'));
      expect(main, 'the prompt reached the upstream').toBeDefined();
      expect((main?.body.messages as Array<{ role: string }> | undefined)?.[0]?.role).toBe('system');
      expect(main?.headers.authorization).not.toContain(gateway.key);

      const rows = await waitForRows(startedAt, chats.length);
      expect(rows.length).toBeGreaterThan(0);
      for (const row of rows) {
        expect(row).toMatchObject({ endpoint: 'messages', status: 200, outcome: 'success' });
        expect(['cc-main', 'cc-fast']).toContain(row.model);
        expect(row.user_agent).toMatch(/claude-cli/);
      }
      expect(rows.some((row) => row.model === 'cc-main' && row.prompt_tokens === 1200)).toBe(true);
      // Its gateway model discovery reads GET /v1/models with the same token.
      const listed = await gateway.gateway.database.db
        .selectFrom('request_log')
        .selectAll()
        .where('created_at', '>=', startedAt)
        .where('endpoint', '=', 'models')
        .execute();
      expect(listed).toEqual([
        expect.objectContaining({ status: 200, user_agent: expect.stringMatching(/^claude-code\//) }),
      ]);
    }, 180_000);

    it('runs one of its own tools for the model and sends the result back (tool_use / tool_result)', async () => {
      const run = await runClaude('Read note.txt and tell me what it says.', { ANTHROPIC_MODEL: 'cc-reader' }, [
        '--allowedTools',
        'Read',
      ]);
      expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
      expect(run.stdout.trim()).toBe(`The note says: ${noteText}`);
      const calls = mock.requests.filter((request) => request.body.model === 'cc-reader');
      const second = calls.at(-1)?.body.messages as Array<Record<string, unknown>>;
      const assistant = second.find((message) => message.role === 'assistant');
      expect(assistant?.tool_calls).toEqual([
        expect.objectContaining({ id: 'call_read_1', function: expect.objectContaining({ name: 'Read' }) }),
      ]);
      expect(second.at(-1)).toMatchObject({ role: 'tool', tool_call_id: 'call_read_1' });
    }, 180_000);
  },
);

describe.skipIf(!existsSync(claude) && process.env.CI !== 'true')(
  'Claude Code through the gateway (a Claude model, passed through)',
  () => {
    it('reaches Anthropic with its own protocol headers and the gateway’s key', async () => {
      const run = await runClaude('Say hello to Anthropic.', { ANTHROPIC_MODEL: 'claude-sonnet-4-5' });
      expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
      // The Anthropic mock echoes the last user text it was sent: the prompt came through and the answer came back.
      expect(run.stdout).toContain('Say hello to Anthropic.');
      const upstream = anthropic.requests.find((request) =>
        JSON.stringify(request.body).includes('Say hello to Anthropic'),
      );
      expect(upstream?.path).toMatch(/^\/v1\/messages(\?beta=true)?$/);
      expect(upstream?.body.model).toBe('mock');
      expect(upstream?.headers['x-api-key']).toBe('sk-ant-gateway-own-key');
      expect(upstream?.headers['anthropic-version']).toBe('2023-06-01');
      expect(String(upstream?.headers['anthropic-beta'])).toContain('claude-code-');
      expect(JSON.stringify(upstream?.headers)).not.toContain(gateway.key);
    }, 180_000);
  },
);

function waitForRows(since: number, count: number) {
  return waitFor(`${count} messages rows in the request log`, async () => {
    const rows = await gateway.gateway.database.db
      .selectFrom('request_log')
      .selectAll()
      .where('created_at', '>=', since)
      .where('endpoint', '=', 'messages')
      .execute();
    return rows.length >= count && rows;
  });
}
