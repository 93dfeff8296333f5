import type { ModelCatalog } from '../access/policy.js';
import type { ModelConfig } from '../config/schema.js';
import type { Provider } from '../providers/provider.js';
import type { ProviderRegistry } from '../providers/registry.js';
import { modelNotFound } from '../server/errors.js';

/** One place a public model can be served: a provider and the model configuration for it. */
export interface Deployment {
  model: ModelConfig;
  provider: Provider;
}

/** Maps a public model name to the deployment that serves it. */
export class Router {
  private readonly deployments = new Map<string, Deployment>();

  constructor(catalog: ModelCatalog, registry: ProviderRegistry) {
    for (const [name, model] of catalog.byName) {
      const provider = registry.get(model.provider);
      // The config schema guarantees every model names a defined provider.
      if (provider) this.deployments.set(name, { model, provider });
    }
  }

  resolve(model: string): Deployment {
    const deployment = this.deployments.get(model);
    if (!deployment) throw modelNotFound(model);
    return deployment;
  }
}
