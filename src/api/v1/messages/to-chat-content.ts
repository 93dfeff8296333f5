import type {
  DocumentBlock,
  ImageBlock,
  MessageBlock,
  SearchResultBlock,
  TextBlock,
} from '../../../providers/anthropic/wire-types.js';
import { type TranslationTarget, untranslatable } from './translation-target.js';

/**
 * Content blocks a user turn (or a tool result) carries -> OpenAI content parts: text as text; images as `image_url`
 * (a data URL for base64 sources); documents as a `file` part (base64 PDFs) or as text (plain-text and content
 * sources); search results as text (title, source, then the passages). What only Anthropic can resolve (Files API
 * ids, PDF URLs) is refused by name. `cache_control` markers and citation settings have no chat equivalent and are
 * left out: they never change the answer.
 */

export type ChatContentPart =
  | { type: 'text'; text: string }
  | { type: 'image_url'; image_url: { url: string } }
  | { type: 'file'; file: { file_data: string; filename?: string } };

const text = (value: string): ChatContentPart => ({ type: 'text', text: value });

function imagePart(block: ImageBlock, path: string, target: TranslationTarget): ChatContentPart {
  const source = block.source;
  switch (source.type) {
    case 'base64':
      return { type: 'image_url', image_url: { url: `data:${source.media_type};base64,${source.data}` } };
    case 'url':
      return { type: 'image_url', image_url: { url: source.url } };
    default:
      return untranslatable(`${path}.source.type`, `an image of source type '${source.type}'`, target);
  }
}

/** A text document keeps its title and context, each on a line of its own before the text. */
function documentText(block: DocumentBlock, body: string): string {
  const lines = [block.title, block.context].filter((line): line is string => typeof line === 'string' && line !== '');
  return lines.length > 0 ? `${lines.join('\n')}\n\n${body}` : body;
}

function documentParts(block: DocumentBlock, path: string, target: TranslationTarget): ChatContentPart[] {
  const source = block.source;
  switch (source.type) {
    case 'base64': {
      const file: { file_data: string; filename?: string } = {
        file_data: `data:${source.media_type};base64,${source.data}`,
      };
      if (typeof block.title === 'string' && block.title) file.filename = block.title;
      return [{ type: 'file', file }];
    }
    case 'text':
      return [text(documentText(block, source.data))];
    case 'content': {
      if (typeof source.content === 'string') return [text(documentText(block, source.content))];
      return source.content.flatMap((inner, index) => userParts(inner, `${path}.source.content.${index}`, target));
    }
    default:
      return untranslatable(`${path}.source.type`, `a document of source type '${source.type}'`, target);
  }
}

function searchResultText(block: SearchResultBlock): string {
  return `${block.title}\n${block.source}\n\n${block.content.map((passage) => passage.text).join('\n\n')}`;
}

/** The parts of one block of a user turn or tool result; [] for empty text (chat providers refuse empty parts). */
export function userParts(block: MessageBlock, path: string, target: TranslationTarget): ChatContentPart[] {
  switch (block.type) {
    case 'text': {
      const value = (block as TextBlock).text;
      return value === '' ? [] : [text(value)];
    }
    case 'image':
      return [imagePart(block as ImageBlock, path, target)];
    case 'document':
      return documentParts(block as DocumentBlock, path, target);
    case 'search_result':
      return [text(searchResultText(block as SearchResultBlock))];
    default:
      return untranslatable(`${path}.type`, `a content block of type '${block.type}'`, target);
  }
}
