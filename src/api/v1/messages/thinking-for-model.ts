import type { ModelConfig } from '../../../config/schema.js';
import { budgetRefusal } from '../../../providers/anthropic/check-budget.js';
import {
  fitThinking,
  replacedDisabled,
  replacedMax,
  replacedXhigh,
} from '../../../providers/anthropic/fit-thinking.js';
import { unsupportedParameter, unsupportedValue } from '../../../routing/parameters.js';

/** The replaced values fit-thinking.ts names, as the field and the value the model lacks. */
const replacedFields: Record<string, [string, string]> = {
  [replacedXhigh]: ['output_config.effort', 'xhigh'],
  [replacedMax]: ['output_config.effort', 'max'],
  [replacedDisabled]: ['thinking.type', 'disabled'],
};

/**
 * A Messages request's `thinking` and `output_config.effort` in the form the deployment's Claude model takes
 * (fit-thinking.ts). What had to be left out or replaced is named for `x-switchboard-dropped-parameters`, or, for a
 * model configured `on_unsupported: refuse`, is a 400 before anything is sent: `unsupported_parameter` for thinking a
 * model cannot do, `unsupported_value` for an effort it lacks or thinking it cannot turn off. A budget Anthropic would
 * refuse (under 1024 tokens, or not under `max_tokens`) is refused here with its words.
 */
export function thinkingForModel(
  request: Record<string, unknown>,
  model: ModelConfig,
): { body: Record<string, unknown>; dropped: string[] } {
  const fitted = fitThinking(request, model);
  const refusal = budgetRefusal(fitted.body);
  if (refusal) throw refusal;
  if (model.parameters.onUnsupported === 'refuse') {
    for (const name of fitted.dropped) {
      const replaced = replacedFields[name];
      if (replaced) throw unsupportedValue(replaced[0], replaced[1], model.name);
      throw unsupportedParameter(name, model.name);
    }
  }
  return fitted;
}
