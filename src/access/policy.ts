import type { ModelConfig } from '../config/schema.js';

/**
 * Which models a caller may use. This one function both authorizes chat requests and produces /v1/models, so the
 * list a key sees and the models it is allowed to call can never disagree.
 */

export interface ModelCatalog {
  /** Public model names in configuration order. */
  readonly names: readonly string[];
  readonly byName: ReadonlyMap<string, ModelConfig>;
}

export function buildModelCatalog(models: readonly ModelConfig[]): ModelCatalog {
  return { names: models.map((model) => model.name), byName: new Map(models.map((model) => [model.name, model])) };
}

/**
 * The models a key may call: configured models, narrowed by the account's list (["*"] = all), narrowed again by the
 * key's own list when it has one. Names that are not configured are ignored, not invented.
 */
export function allowedModels(
  catalog: ModelCatalog,
  accountModels: readonly string[],
  keyModels: readonly string[] | null,
): string[] {
  const accountAllowsAll = accountModels.includes('*');
  const accountSet = new Set(accountModels);
  const keySet = keyModels === null || keyModels.includes('*') ? null : new Set(keyModels);
  return catalog.names.filter(
    (name) => (accountAllowsAll || accountSet.has(name)) && (keySet === null || keySet.has(name)),
  );
}
