import type { ModelConfig } from '../../../config/schema.js';
import { fitThinking, replacedXhigh } from '../../../providers/anthropic/fit-thinking.js';
import { unsupportedParameter, unsupportedValue } from '../../../routing/parameters.js';

/**
 * A Messages request's `thinking` and `output_config.effort` in the form the deployment's Claude model takes
 * (fit-thinking.ts). What had to be left out or replaced is named for `x-switchboard-dropped-parameters`, or, for a
 * model configured `on_unsupported: refuse`, is a 400 before anything is sent: `unsupported_parameter` for thinking a
 * model cannot do, `unsupported_value` for an effort it lacks.
 */
export function thinkingForModel(
  request: Record<string, unknown>,
  model: ModelConfig,
): { body: Record<string, unknown>; dropped: string[] } {
  const fitted = fitThinking(request, model);
  if (model.parameters.onUnsupported === 'refuse') {
    for (const name of fitted.dropped) {
      if (name === replacedXhigh) throw unsupportedValue('output_config.effort', 'xhigh', model.name);
      throw unsupportedParameter(name, model.name);
    }
  }
  return fitted;
}
