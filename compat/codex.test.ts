import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../test/support/cli.js';
import { useGatewayWithMock } from '../test/support/gateway-fixture.js';
import type { RecordedRequest } from '../test/support/mock-openai-upstream.js';
import { waitFor } from '../test/support/wait.js';

/**
 * The Codex CLI (`codex exec`, installed by scripts/setup-codex.sh) end to end through Switchboard: a custom model
 * provider with `wire_api = "responses"` whose base URL is the gateway, serving a model whose upstream speaks only
 * chat completions. Codex sends what the contract page describes (store: false with the whole history, developer
 * messages, reasoning settings, a namespace tool, the hosted web_search tool); the upstream first calls Codex's
 * `exec_command` tool, then answers from the tool's output. Codex must print that answer. Then the same with a Claude
 * model (the mock Anthropic upstream) and a reasoning effort: its signed thinking must survive the tool loop.
 */

const codexDir = process.env.SWITCHBOARD_CODEX_DIR ?? path.join(projectRoot, 'data', 'tools', 'codex');
const codex = path.join(codexDir, 'node_modules', '.bin', 'codex');
const present = existsSync(codex);
if (!present) process.stderr.write(`codex e2e: skipped, ${codex} is absent (bash scripts/setup-codex.sh)\n`);

let codexHome: string;

/** Chat chunks as an OpenAI-compatible server streams them, with usage at the end. */
function streamChunks(response: ServerResponse, deltas: Array<Record<string, unknown>>, finish: string) {
  response.writeHead(200, { 'content-type': 'text/event-stream' });
  const base = {
    id: 'chatcmpl-codex',
    object: 'chat.completion.chunk',
    created: 1_700_000_000,
    model: 'codex-upstream',
  };
  for (const delta of deltas) {
    response.write(`data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta, finish_reason: null }] })}\n\n`);
  }
  response.write(`data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta: {}, finish_reason: finish }] })}\n\n`);
  const usage = { prompt_tokens: 1200, completion_tokens: 20, total_tokens: 1220 };
  response.write(`data: ${JSON.stringify({ ...base, choices: [], usage })}\n\n`);
  response.end('data: [DONE]\n\n');
}

function answerCodex(request: RecordedRequest, response: ServerResponse) {
  const messages = request.body.messages as Array<{ role: string; content: unknown; tool_call_id?: string }>;
  const last = messages.at(-1);
  if (last?.role === 'tool') {
    const output = JSON.stringify(last.content);
    const saw = output.includes('hello-from-codex') ? 'the command printed hello-from-codex' : 'the command ran';
    streamChunks(response, [{ role: 'assistant', content: 'Done: ' }, { content: saw }], 'stop');
    return;
  }
  const args = JSON.stringify({ cmd: 'echo hello-from-codex' });
  streamChunks(
    response,
    [
      {
        role: 'assistant',
        tool_calls: [
          { index: 0, id: 'call_codex_1', type: 'function', function: { name: 'exec_command', arguments: '' } },
        ],
      },
      { tool_calls: [{ index: 0, function: { arguments: args.slice(0, 10) } }] },
      { tool_calls: [{ index: 0, function: { arguments: args.slice(10) } }] },
    ],
    'tool_calls',
  );
}

const deepSeekThought = 'I should run the command first.';

/**
 * A reasoning model behind an OpenAI-compatible server that, as DeepSeek's thinking mode does, reasons in
 * `reasoning_content` and refuses (400) a request whose assistant message with tool calls lacks that reasoning.
 */
function answerAsDeepSeek(request: RecordedRequest, response: ServerResponse) {
  const messages = request.body.messages as Array<{ role: string; tool_calls?: unknown; reasoning_content?: unknown }>;
  const calling = messages.find((message) => message.role === 'assistant' && message.tool_calls !== undefined);
  if (calling && calling.reasoning_content !== deepSeekThought) {
    const error = { message: 'The `reasoning_content` in the thinking mode must be passed back to the API.' };
    const text = JSON.stringify({ error: { ...error, type: 'invalid_request_error', code: 'invalid_request_error' } });
    response.writeHead(400, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    response.end(text);
    return;
  }
  if (calling) {
    streamChunks(
      response,
      [{ role: 'assistant', reasoning_content: 'Now answer.' }, { content: 'Done thinking.' }],
      'stop',
    );
    return;
  }
  const args = JSON.stringify({ cmd: 'echo hello-from-codex' });
  streamChunks(
    response,
    [
      { role: 'assistant', reasoning_content: deepSeekThought },
      {
        tool_calls: [
          { index: 0, id: 'call_ds_1', type: 'function', function: { name: 'exec_command', arguments: args } },
        ],
      },
    ],
    'tool_calls',
  );
}

describe.skipIf(!present)('Codex CLI through a translated provider', () => {
  const setup = useGatewayWithMock({
    providerMocks: ['thinking-tools'],
    upstreamHandlers: { 'codex-upstream': answerCodex, 'deepseek-upstream': answerAsDeepSeek },
    models: [
      { name: 'codex-model', provider: 'mock', upstream_model: 'codex-upstream' },
      { name: 'deepseek-model', provider: 'mock', upstream_model: 'deepseek-upstream' },
    ],
  });

  beforeAll(() => {
    codexHome = mkdtempSync(path.join(tmpdir(), 'switchboard-codex-'));
    writeFileSync(
      path.join(codexHome, 'config.toml'),
      [
        'model = "codex-model"',
        'model_provider = "switchboard"',
        '',
        '[model_providers.switchboard]',
        'name = "Switchboard"',
        `base_url = "${setup.gateway.baseUrl}"`,
        'env_key = "SWITCHBOARD_KEY"',
        'wire_api = "responses"',
        'request_max_retries = 0',
        'stream_max_retries = 0',
        '',
      ].join('\n'),
    );
  });

  afterAll(() => {
    if (codexHome) rmSync(codexHome, { recursive: true, force: true });
  });

  /** `codex exec` with the prompt (and `-c` overrides before it), run to its end. */
  function runCodex(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
    return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(codex, ['exec', '--skip-git-repo-check', '--color', 'never', ...args], {
        cwd: codexHome,
        env: { ...process.env, CODEX_HOME: codexHome, SWITCHBOARD_KEY: setup.gateway.key },
        // Codex reads a prompt from a piped stdin; it has its prompt.
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      // A Codex that hangs fails the test with what it printed, instead of timing it out silently.
      const watchdog = setTimeout(() => child.kill('SIGKILL'), 90_000);
      child.on('exit', () => clearTimeout(watchdog));
      let out = '';
      let err = '';
      child.stdout.on('data', (chunk) => {
        out += chunk;
      });
      child.stderr.on('data', (chunk) => {
        err += chunk;
      });
      child.on('exit', (exitCode) => resolve({ code: exitCode, stdout: out, stderr: err }));
    });
  }

  it('runs a tool through the gateway and prints the model’s answer', async () => {
    const { code, stdout, stderr } = await runCodex(['Run `echo hello-from-codex` and tell me what it printed.']);
    expect(code, `${stdout}\n${stderr}`).toBe(0);
    expect(stdout).toMatch(/Done: the command (printed hello-from-codex|ran)/);

    const upstream = setup.mock.requests.filter((request) => request.body.model === 'codex-upstream');
    expect(upstream.length).toBe(2);
    const [first, second] = upstream.map((request) => request.body) as [
      Record<string, unknown>,
      Record<string, unknown>,
    ];
    // Codex's tools reached the chat upstream as functions: the namespace's expanded, the hosted one left out.
    const names = (first.tools as Array<{ function: { name: string } }>).map((tool) => tool.function.name);
    expect(names).toContain('exec_command');
    expect(names.some((name) => name.startsWith('multi_agent_v1__'))).toBe(true);
    expect(names).not.toContain('web_search');
    // Its developer messages became system messages; the second turn carries the call and its output.
    expect((first.messages as Array<{ role: string }>)[0]?.role).toBe('system');
    const history = second.messages as Array<{ role: string; tool_calls?: unknown[]; tool_call_id?: string }>;
    expect(history.find((message) => message.tool_calls)?.tool_calls).toHaveLength(1);
    expect(history.at(-1)).toMatchObject({ role: 'tool', tool_call_id: 'call_codex_1' });

    // Both turns logged as /v1/responses calls, streamed, with usage.
    const rows = await waitFor('both turns in the request log', async () => {
      const logged = await setup.gateway.gateway.database.db
        .selectFrom('request_log')
        .selectAll()
        .where('endpoint', '=', 'responses')
        .execute();
      return logged.length >= 2 && logged;
    });
    expect(rows).toHaveLength(2);
    for (const row of rows) {
      expect(row).toMatchObject({ model: 'codex-model', status: 200, stream: 1, prompt_tokens: 1200 });
    }
  }, 120_000);

  it('keeps a DeepSeek-style model’s tool loop going: its reasoning goes back as reasoning_content', async () => {
    const { code, stdout, stderr } = await runCodex(['-c', 'model="deepseek-model"', 'Run `echo hello-from-codex`.']);
    expect(code, `${stdout}\n${stderr}`).toBe(0);
    expect(stdout).toContain('Done thinking.');
    const upstream = setup.mock.requests.filter((request) => request.body.model === 'deepseek-upstream');
    expect(upstream).toHaveLength(2);
    const history = upstream[1]?.body.messages as Array<{
      role: string;
      tool_calls?: unknown;
      reasoning_content?: unknown;
    }>;
    expect(history.find((message) => message.tool_calls)?.reasoning_content).toBe(deepSeekThought);
  }, 120_000);

  it('keeps a Claude model’s signed thinking across its tool call (reasoning effort set)', async () => {
    // The mock Claude calls get_weather, which Codex has not: Codex answers the call with an error output, and the
    // tool loop goes on. With thinking on, the mock refuses the second turn unless it starts with the signed thinking,
    // which comes back from the reasoning item Codex resends (store: false, encrypted_content included).
    const { code, stdout, stderr } = await runCodex([
      '-c',
      'model="claude-thinking-tools"',
      '-c',
      'model_reasoning_effort="low"',
      'What is the weather in Paris?',
    ]);
    expect(code, `${stdout}\n${stderr}`).toBe(0);
    expect(stdout).toContain('The weather:');
    const upstream = setup.providerMocks.anthropic.requests.map((request) => request.body);
    expect(upstream).toHaveLength(2);
    for (const body of upstream) expect(body.thinking).toEqual({ type: 'enabled', budget_tokens: 1024 });
    const messages = (upstream[1]?.messages ?? []) as Array<{ role: string; content: Array<{ type: string }> }>;
    const assistant = messages.findLast((message) => message.role === 'assistant');
    expect(assistant?.content.map((block) => block.type)).toEqual([
      'thinking',
      'redacted_thinking',
      'text',
      'tool_use',
    ]);
  }, 120_000);

  it('shows a Claude model’s thinking as the summary Codex asks for, without a reasoning effort', async () => {
    // Codex sends `reasoning: {summary: "auto"}`: with no effort set, Claude thinks at the default (medium) budget,
    // and its thinking is the summary Codex prints, on both turns of the tool loop.
    const before = setup.providerMocks.anthropic.requests.length;
    const { code, stdout, stderr } = await runCodex([
      '-c',
      'model="claude-thinking-tools"',
      'What is the weather in Paris?',
    ]);
    expect(code, `${stdout}\n${stderr}`).toBe(0);
    expect(stdout).toContain('The weather:');
    const upstream = setup.providerMocks.anthropic.requests.slice(before).map((request) => request.body);
    expect(upstream).toHaveLength(2);
    for (const body of upstream) expect(body.thinking).toEqual({ type: 'enabled', budget_tokens: 2048 });
    expect(`${stdout}\n${stderr}`).toContain('I should ask the weather tool');
  }, 120_000);
});
