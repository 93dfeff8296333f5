import type { ChatMessage } from '../../openai/types.js';
import {
  type ContentPart,
  convertParts,
  parseDataUrl,
  parseToolArguments,
  textOf,
  untranslatable,
} from '../message-content.js';
import { splitToolCallId } from '../tool-call-id.js';
import type { GeminiContent, GeminiPart } from './wire-types.js';

/**
 * OpenAI messages -> Gemini `systemInstruction` + `contents`:
 * - system and developer messages become `systemInstruction` parts, in order;
 * - assistant -> role `model`; its tool calls -> `functionCall` parts, each with the thought signature its id carries;
 * - tool messages -> `functionResponse` parts in a user turn. Gemini wants the function *name*, which OpenAI tool
 *   messages do not carry: it is looked up from the assistant tool call with that id. Consecutive turns of the same
 *   role are merged, so all results of a parallel call answer it together.
 */

/** Google's documented value for function calls whose signature was not kept (e.g. made by another model). */
export const skipSignatureValidation = 'skip_thought_signature_validator';

export interface ConvertedContents {
  systemInstruction?: { parts: GeminiPart[] };
  contents: GeminiContent[];
}

const imageTypesByExtension: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  heic: 'image/heic',
  heif: 'image/heif',
};

function imageFromUrl(url: string): GeminiPart {
  const path = url.split(/[?#]/)[0] ?? '';
  const extension = /\.([a-z0-9]+)$/i.exec(path)?.[1]?.toLowerCase() ?? '';
  return { fileData: { mimeType: imageTypesByExtension[extension] ?? 'image/jpeg', fileUri: url } };
}

function convertPart(part: ContentPart, param: string): GeminiPart | undefined {
  switch (part.type) {
    case 'text':
    case 'refusal': {
      const text = typeof part.text === 'string' ? part.text : typeof part.refusal === 'string' ? part.refusal : '';
      return text === '' ? undefined : { text };
    }
    case 'image_url': {
      const url = part.image_url?.url;
      if (typeof url !== 'string') throw untranslatable(`${param}.image_url.url`, 'gemini', 'an image without a URL');
      if (/^https?:\/\//i.test(url)) return imageFromUrl(url);
      const data = parseDataUrl(url);
      if (!data) throw untranslatable(`${param}.image_url.url`, 'gemini', 'an image URL that is not http(s) or base64');
      return { inlineData: { mimeType: data.mediaType, data: data.data } };
    }
    case 'input_audio': {
      const audio = part.input_audio;
      if (typeof audio?.data !== 'string') throw untranslatable(`${param}.input_audio`, 'gemini', 'audio without data');
      return { inlineData: { mimeType: audio.format === 'mp3' ? 'audio/mp3' : 'audio/wav', data: audio.data } };
    }
    case 'file': {
      const data = typeof part.file?.file_data === 'string' ? parseDataUrl(part.file.file_data) : undefined;
      if (!data) throw untranslatable(`${param}.file`, 'gemini', 'a file that is not an inline base64 data URL');
      return { inlineData: { mimeType: data.mediaType, data: data.data } };
    }
    default:
      throw untranslatable(`${param}.type`, 'gemini', `content of type '${String(part.type)}'`);
  }
}

function geminiParts(content: unknown, param: string): GeminiPart[] {
  return convertParts(content, param, convertPart);
}

/** A tool's output as the object `functionResponse.response` must be: a JSON object as is, anything else as `output`. */
function responseObject(content: unknown): Record<string, unknown> {
  const text = textOf(content);
  try {
    const value: unknown = JSON.parse(text);
    if (value && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // Plain text output.
  }
  return { output: text };
}

export function convertContents(messages: readonly ChatMessage[]): ConvertedContents {
  const system: GeminiPart[] = [];
  const contents: GeminiContent[] = [];
  const functionNames = new Map<string, string>();
  const append = (role: 'user' | 'model', parts: GeminiPart[]) => {
    if (parts.length === 0) return;
    const last = contents.at(-1);
    if (last?.role === role) last.parts.push(...parts);
    else contents.push({ role, parts });
  };

  messages.forEach((message, index) => {
    const param = `messages[${index}]`;
    switch (message.role) {
      case 'system':
      case 'developer':
        system.push(...geminiParts(message.content, `${param}.content`));
        return;
      case 'user':
        append('user', geminiParts(message.content, `${param}.content`));
        return;
      case 'assistant': {
        // No content (null beside tool calls) is no parts.
        const parts = geminiParts(message.content, `${param}.content`);
        const calls: GeminiPart[] = [];
        (message.tool_calls ?? []).forEach((call, callIndex) => {
          const callParam = `${param}.tool_calls[${callIndex}]`;
          if (call.type !== 'function') throw untranslatable(`${callParam}.type`, 'gemini', 'a custom tool call');
          const { id, signature } = splitToolCallId(call.id);
          functionNames.set(id, call.function.name);
          const part: GeminiPart = {
            functionCall: {
              name: call.function.name,
              args: parseToolArguments(call.function.arguments, `${callParam}.function.arguments`),
            },
          };
          if (signature) part.thoughtSignature = signature;
          calls.push(part);
        });
        // Gemini 3 refuses function calls without the signature it issued; calls made elsewhere have none.
        const first = calls[0];
        if (first && !calls.some((call) => call.thoughtSignature)) first.thoughtSignature = skipSignatureValidation;
        append('model', [...parts, ...calls]);
        return;
      }
      case 'tool': {
        const id = splitToolCallId(String(message.tool_call_id)).id;
        const name = functionNames.get(id);
        if (!name) {
          throw untranslatable(
            `${param}.tool_call_id`,
            'gemini',
            'a tool result whose tool_call_id matches no earlier assistant tool call',
          );
        }
        append('user', [{ functionResponse: { name, response: responseObject(message.content) } }]);
        return;
      }
      default:
        throw untranslatable(`${param}.role`, 'gemini', `a message with role '${message.role}'`);
    }
  });
  return system.length > 0 ? { systemInstruction: { parts: system }, contents } : { contents };
}
