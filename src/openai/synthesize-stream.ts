import type { ChatCompletion, ChatCompletionChoice } from './types.js';

/**
 * Turns a complete `chat.completion` into the chunk sequence a streaming client expects, for upstreams that cannot
 * stream (or ignored `stream: true`): per choice a role delta, the content, the tool calls (each whole in its first
 * delta), a finish chunk; then the usage chunk with `choices: []`.
 */
export function synthesizeChunks(completion: ChatCompletion): ChatCompletion[] {
  const base = {
    id: completion.id,
    object: 'chat.completion.chunk' as const,
    created: completion.created,
    model: completion.model,
    ...(completion.system_fingerprint === undefined ? {} : { system_fingerprint: completion.system_fingerprint }),
  };
  const chunk = (choice: Partial<ChatCompletionChoice> & { index: number }): ChatCompletion => ({
    ...base,
    choices: [{ logprobs: null, finish_reason: null, delta: {}, ...choice }],
  });
  const chunks: ChatCompletion[] = [];
  for (const choice of completion.choices) {
    const message = (choice.message ?? {}) as Record<string, unknown>;
    chunks.push(chunk({ index: choice.index, delta: { role: 'assistant', content: '' } }));
    if (typeof message.reasoning_content === 'string' && message.reasoning_content) {
      chunks.push(chunk({ index: choice.index, delta: { reasoning_content: message.reasoning_content } }));
    }
    if (typeof message.content === 'string' && message.content) {
      chunks.push(
        chunk({ index: choice.index, delta: { content: message.content }, logprobs: choice.logprobs ?? null }),
      );
    }
    if (typeof message.refusal === 'string' && message.refusal) {
      chunks.push(chunk({ index: choice.index, delta: { refusal: message.refusal } }));
    }
    if (Array.isArray(message.tool_calls)) {
      message.tool_calls.forEach(
        (call: { id: string; type: string; function: { name: string; arguments: string } }, index: number) => {
          chunks.push(
            chunk({
              index: choice.index,
              delta: {
                tool_calls: [
                  {
                    index,
                    id: call.id,
                    type: 'function',
                    function: { name: call.function.name, arguments: call.function.arguments },
                  },
                ],
              },
            }),
          );
        },
      );
    }
    chunks.push(chunk({ index: choice.index, finish_reason: choice.finish_reason ?? 'stop' }));
  }
  if (completion.usage) chunks.push({ ...base, choices: [], usage: completion.usage });
  return chunks;
}
