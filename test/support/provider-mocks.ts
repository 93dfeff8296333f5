import { scenarioModelsFor } from './gateway.js';
import { type MockAnthropicUpstream, startMockAnthropicUpstream } from './mock-anthropic-upstream.js';
import { type MockGeminiUpstream, startMockGeminiUpstream } from './mock-gemini-upstream.js';

/**
 * The Anthropic and Gemini mock upstreams, with the providers and models a test gateway needs to reach them:
 * `claude-<scenario>` and `gemini-<scenario>` serve the mocks' behaviours of the same name (mock, tools, …), next to
 * the OpenAI-compatible mock's own scenario models.
 */

export interface ProviderMocks {
  anthropic: MockAnthropicUpstream;
  gemini: MockGeminiUpstream;
  providers: Array<Record<string, unknown>>;
  models: Array<Record<string, unknown>>;
  close(): Promise<void>;
}

/** Public model-name prefixes, one per provider type; '' is the OpenAI-compatible mock (gpt-4o-mini, tools). */
export const providerPrefixes = ['', 'claude-', 'gemini-'] as const;

/** The public name of scenario `mock` for a prefix (the OpenAI-compatible mock calls it gpt-4o-mini). */
export const textModel = (prefix: string) => (prefix === '' ? 'gpt-4o-mini' : `${prefix}mock`);

export async function startProviderMocks(scenarios: readonly string[] = ['mock', 'tools']): Promise<ProviderMocks> {
  const anthropic = await startMockAnthropicUpstream();
  const gemini = await startMockGeminiUpstream();
  return {
    anthropic,
    gemini,
    providers: [
      { name: 'claude', type: 'anthropic', base_url: anthropic.baseUrl, api_key: 'sk-ant-mock' },
      { name: 'google', type: 'gemini', base_url: gemini.baseUrl, api_key: 'gemini-mock-key' },
    ],
    models: [
      ...scenarioModelsFor('claude', 'claude-', scenarios),
      ...scenarioModelsFor('google', 'gemini-', scenarios),
    ],
    close: async () => {
      await Promise.all([anthropic.close(), gemini.close()]);
    },
  };
}
