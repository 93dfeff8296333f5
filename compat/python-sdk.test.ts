import { spawn } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../test/support/cli.js';
import { useGatewayWithMock } from '../test/support/gateway-fixture.js';
import { compatPython, hasPrerequisite } from '../test/support/prerequisites.js';

/** Runs compat/python (pytest + the official openai and anthropic Python SDKs, in the venv scripts/setup-python-compat.sh makes). */

const python = compatPython;

const setup = useGatewayWithMock({
  // Anthropic and Gemini mock upstreams too, for compat/python/test_providers.py (thinking-tools: Claude's thinking).
  providerMocks: ['mock', 'tools', 'thinking-tools'],
  // Embedding models for compat/python/test_embeddings.py.
  models: ['embed', 'embed-float-only', 'embed-base64-only'].map((upstream) => ({
    name: upstream === 'embed' ? 'text-embedding-3-small' : upstream,
    provider: 'mock',
    upstream_model: upstream,
    capabilities: ['embeddings'],
  })),
});

describe.runIf(hasPrerequisite('Python SDK environment'))('openai and anthropic Python SDKs', () => {
  it('passes the pytest suite in compat/python', async () => {
    const { code, output } = await new Promise<{ code: number | null; output: string }>((resolve) => {
      const child = spawn(
        python,
        ['-m', 'pytest', '-q', '-p', 'no:cacheprovider', path.join(projectRoot, 'compat', 'python')],
        {
          env: { ...process.env, SWITCHBOARD_BASE_URL: setup.gateway.baseUrl, SWITCHBOARD_KEY: setup.gateway.key },
        },
      );
      let text = '';
      child.stdout.on('data', (chunk) => {
        text += chunk;
      });
      child.stderr.on('data', (chunk) => {
        text += chunk;
      });
      child.on('exit', (exitCode) => resolve({ code: exitCode, output: text }));
    });
    expect(code, output).toBe(0);
    expect(output).toMatch(/\d+ passed/);
    // compat/python/test_providers.py runs every provider type; test_responses.py the Responses API;
    // test_anthropic_sdk.py the Messages API.
    expect(Number(/(\d+) passed/.exec(output)?.[1])).toBeGreaterThanOrEqual(40);
  }, 120_000);
});
