import type { GeminiLogprobsResult } from './wire-types.js';

/** Gemini's `logprobsResult` as OpenAI `logprobs.content` (bytes computed from the token text). */
export function convertLogprobs(
  result: GeminiLogprobsResult | undefined,
): { content: unknown[]; refusal: null } | null {
  if (!result?.chosenCandidates) return null;
  const content = result.chosenCandidates.map((chosen, position) => {
    const token = chosen.token ?? '';
    return {
      token,
      logprob: chosen.logProbability ?? 0,
      bytes: [...Buffer.from(token, 'utf8')],
      top_logprobs: (result.topCandidates?.[position]?.candidates ?? []).map((candidate) => ({
        token: candidate.token ?? '',
        logprob: candidate.logProbability ?? 0,
        bytes: [...Buffer.from(candidate.token ?? '', 'utf8')],
      })),
    };
  });
  return { content, refusal: null };
}
