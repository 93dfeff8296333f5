import type { ChatWrapper, LlamaModel } from 'node-llama-cpp';

type Library = typeof import('node-llama-cpp');

export interface ChosenTemplate {
  wrapper: ChatWrapper;
  /** Where the template came from, for the start-up log line. */
  source: 'configuration' | 'gguf' | 'inferred';
  description: string;
}

/**
 * The prompt format: the operator's template if configured, else the Jinja template the model's authors put in the
 * GGUF metadata (`tokenizer.chat_template`), rendered as-is, so the model sees exactly the format it was trained on.
 * Only a file without a usable template falls back to node-llama-cpp's inference from the model's name and
 * architecture. Template parts become special tokens, text from messages never does: a user cannot inject
 * `<|im_end|>` to forge a turn.
 */
export function chooseChatTemplate(
  library: Library,
  model: LlamaModel,
  configuredTemplate: string | undefined,
  warn: (message: string) => void,
): ChosenTemplate {
  if (configuredTemplate !== undefined) {
    return {
      wrapper: new library.JinjaTemplateChatWrapper({ template: configuredTemplate, tokenizer: model.tokenizer }),
      source: 'configuration',
      description: 'Jinja template from the chat_template setting',
    };
  }
  const embedded = model.fileInfo.metadata.tokenizer?.chat_template;
  if (typeof embedded === 'string' && embedded.trim().length > 0) {
    try {
      const wrapper = new library.JinjaTemplateChatWrapper({ template: embedded, tokenizer: model.tokenizer });
      // Rendering once surfaces template errors now rather than on the first request.
      wrapper.generateContextState({
        chatHistory: [
          { type: 'user', text: 'ping' },
          { type: 'model', response: [] },
        ],
      });
      return { wrapper, source: 'gguf', description: 'Jinja template from the GGUF metadata' };
    } catch (error) {
      warn(
        `the GGUF chat template cannot be rendered (${error instanceof Error ? error.message : String(error)}); inferring the format instead`,
      );
    }
  }
  const wrapper = library.resolveChatWrapper(model, { noJinja: true });
  return { wrapper, source: 'inferred', description: `${wrapper.wrapperName} format inferred from the model` };
}
