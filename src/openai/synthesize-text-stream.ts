import type { TextCompletion } from './text-completion-types.js';

/**
 * A whole text completion as the chunks a streaming client expects, for upstreams that answered one JSON completion
 * to a stream request (or models configured with `streaming: false`): one chunk per choice, then the usage chunk with
 * `choices: []`.
 */
export function synthesizeTextChunks(completion: TextCompletion): TextCompletion[] {
  const { choices, usage, ...base } = completion;
  const chunks: TextCompletion[] = choices.map((choice) => ({ ...base, choices: [choice] }));
  if (usage) chunks.push({ ...base, choices: [], usage });
  return chunks;
}

/** Whether a chunk carries generated (or echoed) text: what a stream is held for before it can no longer fail over. */
export function textChunkHasContent(chunk: TextCompletion): boolean {
  for (const choice of chunk.choices) if (typeof choice?.text === 'string' && choice.text.length > 0) return true;
  return false;
}

/** Characters of text in a completion or chunk, for usage estimates. */
export function textCharacters(completion: TextCompletion): number {
  let characters = 0;
  for (const choice of completion.choices) if (typeof choice?.text === 'string') characters += choice.text.length;
  return characters;
}
