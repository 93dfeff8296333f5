import { type ApiError, apiError } from '../../errors/api-error.js';
import { minimumThinkingBudget } from './thinking-from-effort.js';

/**
 * A thinking budget the client gave, checked as Anthropic checks it, so a request it would refuse is answered with the
 * same 400 before anything is sent: at least 1024 tokens, and less than `max_tokens` (where the request has one; a
 * token count has none). In Anthropic's own words.
 */
export function budgetRefusal(body: Record<string, unknown>): ApiError | undefined {
  const thinking = body.thinking as { type?: unknown; budget_tokens?: unknown } | null | undefined;
  if (thinking?.type !== 'enabled' || typeof thinking.budget_tokens !== 'number') return undefined;
  const budget = thinking.budget_tokens;
  if (budget < minimumThinkingBudget) {
    return apiError(
      'invalid_value',
      `thinking.enabled.budget_tokens: Input should be greater than or equal to ${minimumThinkingBudget}`,
      { param: 'thinking.budget_tokens' },
    );
  }
  if (typeof body.max_tokens === 'number' && body.max_tokens <= budget) {
    return apiError('invalid_value', '`max_tokens` must be greater than `thinking.budget_tokens`.', {
      param: 'thinking.budget_tokens',
    });
  }
  return undefined;
}
