import { z } from 'zod';

/**
 * What the translation of a whole Messages API response reads, typed: content blocks as objects, and the id and model
 * it copies into the chat completion as strings. The blocks' own fields are only tested, so they may be anything.
 */
export const anthropicResponseShape = z.looseObject({
  id: z.string(),
  model: z.string(),
  content: z.array(z.looseObject({})),
});
