import type { ModelConfig } from '../../../config/schema.js';
import { samplingParameters } from '../../../providers/anthropic/refused-sampling.js';
import { refusesSampling } from '../../../providers/anthropic/thinking-style.js';
import { isNeutral, unsupportedParameter } from '../../../routing/parameters.js';

/**
 * A Messages request's `temperature`, `top_p` and `top_k` for a deployment whose Claude model takes none of them
 * (thinking-style.ts), since a client may be served by a later model than the one it wrote for (a route's fallback):
 * left out, and named for `x-switchboard-dropped-parameters` unless at their default (temperature 1, top_p 1), or, for
 * a model configured `on_unsupported: refuse`, a 400 before anything is sent. Other models get them as they came.
 */
export function samplingForModel(
  request: Record<string, unknown>,
  model: ModelConfig,
): { body: Record<string, unknown>; dropped: string[] } {
  if (!refusesSampling(model.upstreamModel)) return { body: request, dropped: [] };
  const set = samplingParameters.filter((name) => request[name] !== undefined && request[name] !== null);
  if (set.length === 0) return { body: request, dropped: [] };
  const body = { ...request };
  const dropped: string[] = [];
  for (const name of set) {
    const value = body[name];
    delete body[name];
    if (isNeutral(name, value)) continue;
    if (model.parameters.onUnsupported === 'refuse') throw unsupportedParameter(name, model.name);
    dropped.push(name);
  }
  return { body, dropped };
}
