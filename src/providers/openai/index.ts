import type { OpenAiProviderConfig } from '../../config/schema.js';
import { outlineCompletion } from '../../openai/outline-completion.js';
import { synthesizeChunks } from '../../openai/synthesize-stream.js';
import type { ChatCompletion, Usage } from '../../openai/types.js';
import { isEventStream } from '../http.js';
import { createHttpProvider } from '../http-provider.js';
import type { CompletionResult, Provider, ProviderDependencies } from '../provider.js';
import { buildOpenAiChatBody, openAiHeaders } from './build-request.js';
import { parseChoicesObject, readChoiceChunks } from './choices.js';
import { embedWithOpenAi } from './embeddings.js';
import { parseOpenAiError } from './parse-error.js';
import { completeTextWithOpenAi, streamTextWithOpenAi } from './text-completions.js';

function parseCompletion(providerName: string, text: string): { completion: ChatCompletion; filledIn: boolean } {
  return parseChoicesObject<ChatCompletion>(providerName, text, 'response', 'message');
}

/**
 * The upstream's bytes go to the client as they came: outlined to check them and read the usage, parsed in full only
 * when something needs the completion itself (or when the outline cannot vouch for them).
 */
function completionResult(providerName: string, body: Buffer): CompletionResult {
  const outline = outlineCompletion(body);
  if (outline) return new OutlinedCompletion(providerName, body, outline.usage);
  const { completion, filledIn } = parseCompletion(providerName, body.toString('utf8'));
  // A completion the upstream named otherwise (or not at all), or whose choices lacked something, reaches the client
  // as what it is, serialized again.
  if (completion.object === 'chat.completion' && !filledIn) return { completion, raw: body };
  completion.object = 'chat.completion';
  return { completion };
}

/** A completion read only in outline; parsed on first use of `completion` (a class: no closure per request). */
class OutlinedCompletion implements CompletionResult {
  private parsed: ChatCompletion | undefined;

  constructor(
    private readonly providerName: string,
    readonly raw: Buffer,
    readonly usage: Usage,
  ) {}

  get completion(): ChatCompletion {
    this.parsed ??= parseCompletion(this.providerName, this.raw.toString('utf8')).completion;
    return this.parsed;
  }
}

/** Any OpenAI-compatible server: OpenAI, vLLM, Ollama, llama.cpp server, Groq, Together, Mistral, DeepSeek, … */
export function createOpenAiProvider(config: OpenAiProviderConfig, dependencies: ProviderDependencies): Provider {
  // Built once per provider: they depend only on its configuration and on streaming or not.
  const jsonHeaders = openAiHeaders(config, false);
  const streamHeaders = openAiHeaders(config, true);
  return createHttpProvider(
    {
      settings: config,
      parseError: parseOpenAiError,
      request: (call, stream, basePath) => ({
        path: `${basePath}/chat/completions`,
        headers: stream ? streamHeaders : jsonHeaders,
        body: buildOpenAiChatBody(call),
      }),
      readCompletion: (body) => completionResult(config.name, body),
      async readStream(response) {
        if (isEventStream(response)) return readChoiceChunks<ChatCompletion>(config.name, response, 'delta');
        // The upstream ignored stream: true and answered with one JSON completion: stream it ourselves.
        const text = await response.text();
        return synthesizeChunks(parseCompletion(config.name, text).completion).map((chunk) => ({ chunk }));
      },
      embed: (call, transport) => embedWithOpenAi(config.name, jsonHeaders, call, transport),
      completeText: (call, transport) => completeTextWithOpenAi(config.name, jsonHeaders, call, transport),
      streamText: (call, transport) => streamTextWithOpenAi(config.name, streamHeaders, call, transport),
      // /v1/responses goes to the upstream's own /responses for models marked `responses_api: native`.
      forwarding: { apis: ['responses'], headers: (call) => (call.stream ? streamHeaders : jsonHeaders) },
    },
    dependencies,
  );
}
