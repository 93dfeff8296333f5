import type { ChatHistoryItem } from 'node-llama-cpp';
import { type ApiError, apiError } from '../../errors/api-error.js';
import type { ChatMessage } from '../../openai/types.js';

/**
 * OpenAI messages -> node-llama-cpp chat history, which the model's chat template then renders. Only text can be
 * rendered; anything else is refused with a 400 that names the part, never silently dropped (a dropped image or tool
 * result would make the model answer a different question than the one asked).
 */

function unsupported(message: string, param: string): ApiError {
  return apiError('unsupported_content', message, { param });
}

/** A message's text: a string, or the text parts of an array joined by newlines. */
function textOf(content: unknown, param: string, modelName: string): string {
  if (content === undefined || content === null) return '';
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  const texts: string[] = [];
  content.forEach((part: { type?: unknown; text?: unknown; refusal?: unknown }, index) => {
    if (part.type === 'text' && typeof part.text === 'string') texts.push(part.text);
    else if (part.type === 'refusal' && typeof part.refusal === 'string') texts.push(part.refusal);
    else {
      throw unsupported(
        `The model \`${modelName}\` accepts text only; content parts of type '${String(part.type)}' are not supported.`,
        `${param}[${index}].type`,
      );
    }
  });
  return texts.join('\n');
}

export function toChatHistory(messages: readonly ChatMessage[], modelName: string): ChatHistoryItem[] {
  const history: ChatHistoryItem[] = [];
  messages.forEach((message, index) => {
    const param = `messages[${index}]`;
    switch (message.role) {
      case 'system':
      case 'developer':
        history.push({ type: 'system', text: textOf(message.content, `${param}.content`, modelName) });
        return;
      case 'user':
        history.push({ type: 'user', text: textOf(message.content, `${param}.content`, modelName) });
        return;
      case 'assistant':
        if ((Array.isArray(message.tool_calls) && message.tool_calls.length > 0) || message.function_call) {
          throw unsupported(
            `The model \`${modelName}\` does not support tool calls, so a conversation cannot contain them.`,
            `${param}.tool_calls`,
          );
        }
        history.push({ type: 'model', response: [textOf(message.content, `${param}.content`, modelName)] });
        return;
      default:
        throw unsupported(
          `The model \`${modelName}\` does not support tool calls, so messages with role '${message.role}' cannot be used.`,
          `${param}.role`,
        );
    }
  });
  // The empty model turn at the end is what makes the template add the assistant's generation prompt.
  history.push({ type: 'model', response: [] });
  return history;
}
