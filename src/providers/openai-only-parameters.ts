/**
 * Chat-completions parameters for features only OpenAI's API has (audio output, predicted outputs, hosted web
 * search, reasoning and service controls, the deprecated `functions`): no adapter that translates to another vendor's
 * API can carry them, so each lists them among the parameters it does not translate.
 */
export const openAiOnlyParameters = [
  'audio',
  'modalities',
  'prediction',
  'web_search_options',
  'reasoning_effort',
  'verbosity',
  'service_tier',
  'functions',
  'function_call',
] as const;
