import type { ChatMessage, ToolCall } from '../../../openai/types.js';
import { itemNotFound, unknownCallId, untranslatable } from './errors.js';
import { decodeThinking, type ThinkingBlock } from './reasoning-envelope.js';
import type { ToolNameMap } from './tool-names.js';
import type {
  ContentPart,
  FunctionCallItem,
  FunctionCallOutputItem,
  InputItem,
  MessageItem,
  ReasoningItem,
} from './types.js';

/**
 * Responses items -> chat messages:
 * - `instructions` were already made the leading system message; system and developer messages become system
 *   messages (or developer ones, for chat upstreams that take them), user messages user ones with their parts
 *   (`input_text` -> text, `input_image` -> image_url, `input_file` -> file, `input_audio` -> input_audio);
 * - the items of one assistant turn (its messages, function calls and reasoning, up to the next user message or
 *   function output) become one assistant message: text as content, function calls as `tool_calls`;
 * - `function_call_output` -> a tool message; its `call_id` must answer a function call made before it;
 * - reasoning goes back into its turn's assistant message as `reasoning_content` (its text; what DeepSeek and vLLM
 *   read back, and what DeepSeek requires after a tool call), and signed thinking the gateway gave in a reasoning
 *   item's `encrypted_content` (reasoning-envelope.ts) also as `thinking_blocks`, which the Anthropic adapter puts first
 *   in the turn; which of the two a provider gets is settled per deployment (reasoning-history.ts); reasoning state
 *   only its provider can read (OpenAI's `encrypted_content`) is left out and named in `dropped`;
 * - records of hosted tools that ran before (`web_search_call`, …) are left out and named; anything else the chat side
 *   cannot carry (computer and shell calls, compaction, unknown item types) is a 400 naming the item;
 * - an item whose id came before (input repeating what `previous_response_id` replays) is not sent twice.
 * Each item comes with the `param` its errors name: `input[3]`, or `previous_response_id` for replayed history.
 */

export interface ItemAt {
  item: InputItem;
  param: string;
}

export interface ConvertItemsOptions {
  names: ToolNameMap;
  developerRole: 'system' | 'developer';
}

/** Where a chat message came from in the Responses request: what its errors are about, in the client's terms. */
export interface MessageOrigin {
  /** The item (or `instructions`, `input`, `previous_response_id`) the message was made from. */
  param: string;
  /** The field of the item that became the message's `content` (a function output's is `output`). */
  contentField: 'content' | 'output';
  /** The `function_call` items behind the message's `tool_calls`, in order. */
  calls: string[];
}

export interface ConvertedItems {
  messages: ChatMessage[];
  /** Per message, where it came from. */
  origins: MessageOrigin[];
  dropped: string[];
  /** Whether some reasoning came without Claude's signature (text only Anthropic could not take back). */
  unsignedReasoning: boolean;
}

/** Items recording what a hosted tool did; the assistant's following message already says what came of it. */
const leftOutTypes = new Set([
  'web_search_call',
  'file_search_call',
  'image_generation_call',
  'code_interpreter_call',
  'mcp_list_tools',
  'tool_search_call',
  'tool_search_output',
]);

const chatImageDetails = new Set(['auto', 'low', 'high']);

function convertUserPart(part: ContentPart, param: string): Record<string, unknown> {
  switch (part.type) {
    case 'input_text':
    case 'output_text':
      return { type: 'text', text: part.text ?? '' };
    case 'input_image': {
      if (typeof part.image_url !== 'string') {
        throw untranslatable(
          param,
          'an image given by file_id (there is no Files API here: send image_url as a URL or a data URL)',
        );
      }
      const image: Record<string, unknown> = { url: part.image_url };
      // OpenAI's "original" resolution has no chat equivalent; "high" is the closest.
      if (typeof part.detail === 'string') image.detail = chatImageDetails.has(part.detail) ? part.detail : 'high';
      return { type: 'image_url', image_url: image };
    }
    case 'input_file': {
      if (typeof part.file_url === 'string' && part.file_data === undefined && part.file_id === undefined) {
        throw untranslatable(param, 'a file given by file_url (send its content as file_data, a base64 data URL)');
      }
      const file: Record<string, unknown> = {};
      if (typeof part.file_data === 'string') file.file_data = part.file_data;
      else if (typeof part.file_id === 'string') file.file_id = part.file_id;
      if (typeof part.filename === 'string') file.filename = part.filename;
      return { type: 'file', file };
    }
    case 'input_audio':
      return { type: 'input_audio', input_audio: part.input_audio };
    default:
      throw untranslatable(param, `content of type '${part.type}'`);
  }
}

function userContent(content: string | ContentPart[], param: string): unknown {
  if (typeof content === 'string') return content;
  const only = content.length === 1 ? content[0] : undefined;
  if (only?.type === 'input_text') return only.text ?? '';
  return content.map((part, index) => convertUserPart(part, `${param}.content[${index}]`));
}

/** Text-only content (system, developer, assistant, tool output): the texts joined, anything else refused. */
function textContent(content: string | ContentPart[], param: string, what: string): string {
  if (typeof content === 'string') return content;
  let text = '';
  content.forEach((part, index) => {
    if (part.type === 'input_text' || part.type === 'output_text') text += part.text ?? '';
    else if (part.type === 'refusal') text += part.refusal ?? '';
    else throw untranslatable(`${param}[${index}]`, `content of type '${part.type}' in ${what}`);
  });
  return text;
}

function reasoningText(item: ReasoningItem, signed: readonly ThinkingBlock[] | undefined): string {
  if (signed) return signed.flatMap((block) => (block.type === 'thinking' ? [block.thinking] : [])).join('\n\n');
  const parts = item.content && item.content.length > 0 ? item.content : (item.summary ?? []);
  return parts.map((part) => part.text).join('\n\n');
}

export function convertItems(items: readonly ItemAt[], options: ConvertItemsOptions): ConvertedItems {
  const messages: ChatMessage[] = [];
  const dropped: string[] = [];
  const calledIds = new Set<string>();
  let unsignedReasoning = false;
  // The assistant message of the turn being read; any user message or function output ends the turn.
  let turn: ChatMessage | undefined;
  const origins = new Map<ChatMessage, MessageOrigin>();
  const push = (message: ChatMessage, param: string, contentField: MessageOrigin['contentField'] = 'content') => {
    messages.push(message);
    origins.set(message, { param, contentField, calls: [] });
    return message;
  };
  let itemParam = '';
  const assistantTurn = (): ChatMessage => {
    turn ??= push({ role: 'assistant', content: null }, itemParam);
    return turn;
  };
  const appendText = (message: ChatMessage, text: string) => {
    if (text === '') return;
    message.content = typeof message.content === 'string' ? message.content + text : text;
  };

  const seenIds = new Set<string>();
  for (const { item, param } of items) {
    // An item sent again by id (a reference to what previous_response_id already replays) is the same item: once.
    if (typeof item.id === 'string' && item.id !== '') {
      if (seenIds.has(item.id)) continue;
      seenIds.add(item.id);
    }
    itemParam = param;
    const type = item.type ?? 'message';
    switch (type) {
      case 'message': {
        const message = item as MessageItem;
        if (message.role === 'assistant') {
          appendText(assistantTurn(), textContent(message.content, `${param}.content`, 'an assistant message'));
          break;
        }
        turn = undefined;
        if (message.role === 'user') {
          push({ role: 'user', content: userContent(message.content, param) }, param);
        } else {
          const what = `a ${message.role} message`;
          const role = message.role === 'developer' ? options.developerRole : 'system';
          push({ role, content: textContent(message.content, `${param}.content`, what) }, param);
        }
        break;
      }
      case 'function_call': {
        const call = item as FunctionCallItem;
        const message = assistantTurn();
        const toolCall: ToolCall = {
          id: call.call_id,
          type: 'function',
          function: { name: options.names.toChat(call.name, call.namespace), arguments: call.arguments },
        };
        message.tool_calls = [...(message.tool_calls ?? []), toolCall];
        origins.get(message)?.calls.push(param);
        calledIds.add(call.call_id);
        break;
      }
      case 'function_call_output': {
        const output = item as FunctionCallOutputItem;
        if (!calledIds.has(output.call_id)) throw unknownCallId(output.call_id, `${param}.call_id`);
        turn = undefined;
        push(
          {
            role: 'tool',
            tool_call_id: output.call_id,
            content: textContent(output.output, `${param}.output`, 'a function call output'),
          },
          param,
          'output',
        );
        break;
      }
      case 'reasoning': {
        const reasoning = item as ReasoningItem;
        const signed = decodeThinking(reasoning.encrypted_content);
        if (signed) {
          const message = assistantTurn();
          const before = Array.isArray(message.thinking_blocks) ? message.thinking_blocks : [];
          message.thinking_blocks = [...before, ...signed];
        } else if (typeof reasoning.encrypted_content === 'string') {
          dropped.push('input.reasoning.encrypted_content');
        }
        const text = reasoningText(reasoning, signed);
        if (text === '') break;
        if (!signed) unsignedReasoning = true;
        const message = assistantTurn();
        const before = typeof message.reasoning_content === 'string' ? `${message.reasoning_content}\n\n` : '';
        message.reasoning_content = before + text;
        break;
      }
      case 'item_reference':
        throw itemNotFound(String(item.id), `${param}.id`);
      default:
        if (!leftOutTypes.has(type)) throw untranslatable(`${param}.type`, `an item of type '${type.slice(0, 64)}'`);
        dropped.push(`input.${type}`);
    }
  }
  // A turn that held only reasoning (left out or not) says nothing a chat upstream could take.
  const kept = messages.filter(
    (message) => message.role !== 'assistant' || message.content !== null || message.tool_calls !== undefined,
  );
  return {
    messages: kept,
    origins: kept.map((message) => origins.get(message) as MessageOrigin),
    dropped,
    unsignedReasoning,
  };
}
