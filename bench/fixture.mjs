// The upstream's answer in the benchmarks: a 1.4 KB `chat.completion`, as nginx returns it (bench/compare.mjs,
// bench/fixed-rate.mjs).
const answer = 'Switchboard benchmark answer. '.repeat(30).trim();
export const fixture = JSON.stringify({
  id: 'chatcmpl-bench',
  object: 'chat.completion',
  created: 1_700_000_000,
  model: 'mock',
  system_fingerprint: 'fp_bench',
  choices: [
    {
      index: 0,
      message: { role: 'assistant', content: answer, refusal: null, annotations: [] },
      logprobs: null,
      finish_reason: 'stop',
    },
  ],
  usage: {
    prompt_tokens: 12,
    completion_tokens: 180,
    total_tokens: 192,
    prompt_tokens_details: { cached_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: 0 },
  },
});
