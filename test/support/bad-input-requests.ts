import type { Surface } from './bad-input-oracle.js';

/** The valid request of each data-plane endpoint the bad-input tests break, with its surface. */
export interface EndpointCase {
  path: string;
  surface: Surface;
  body: Record<string, unknown>;
}

const user = [{ role: 'user', content: 'Say hello ünïcödé' }];

/** One per endpoint, each through another provider type (the OpenAI, Anthropic and Gemini mocks). */
export const endpointCases: EndpointCase[] = [
  { path: '/v1/chat/completions', surface: 'openai', body: { model: 'gpt-4o-mini', messages: user, max_tokens: 20 } },
  {
    path: '/v1/responses',
    surface: 'openai',
    body: { model: 'gemini-mock', input: 'Say hello ünïcödé', store: false },
  },
  { path: '/v1/messages', surface: 'anthropic', body: { model: 'claude-mock', max_tokens: 20, messages: user } },
  { path: '/v1/messages/count_tokens', surface: 'anthropic', body: { model: 'claude-mock', messages: user } },
  { path: '/v1/embeddings', surface: 'openai', body: { model: 'embed-openai', input: ['hello', 'ünïcödé'] } },
  { path: '/v1/completions', surface: 'openai', body: { model: 'gpt-4o-mini', prompt: 'Say', max_tokens: 5 } },
];

/** The body size limit of the bad-input gateways: small, so bodies around it are quick to send. */
export const bodyLimit = 64 * 1024;

/** The gateway the HTTP-level bad-input tests run: the mocks, an embedding model, a small limit, a short deadline. */
export const badInputGateway = {
  providerMocks: ['mock'],
  config: { limits: { max_body_size: `${bodyLimit}b` }, server: { v1_body_timeout: '1500ms' } },
  models: [{ name: 'embed-openai', provider: 'mock', upstream_model: 'mock', capabilities: ['embeddings'] }],
};
