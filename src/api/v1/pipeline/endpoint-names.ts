/**
 * Every endpoint's name: its request-log `endpoint` and its metrics label. A list at run time, so the CLI and the
 * management API can name the values their endpoint filters take.
 */
export const endpointNames = [
  'chat_completions',
  'models',
  'model',
  'responses',
  'responses_retrieve',
  'responses_delete',
  'responses_input_items',
  'messages',
  'count_tokens',
  'embeddings',
  'completions',
] as const;

export type EndpointName = (typeof endpointNames)[number];
