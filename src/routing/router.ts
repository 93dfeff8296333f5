import type { ModelCatalog } from '../access/policy.js';
import type { DeploymentConfig, ModelConfig, ModelPricing, ProviderConfig } from '../config/schema.js';
import { modelNotFound } from '../errors/api-error.js';
import type { Provider } from '../providers/provider.js';
import type { ProviderRegistry } from '../providers/registry.js';
import type { UpstreamTimeouts } from '../upstream/client.js';

/**
 * The routing table: each public model name -> its deployments (provider + upstream model + the provider entry's
 * credential), weights and timeouts, and the ordered chain of models that serve it (itself, then its fallbacks).
 */

/** One place a public model can be served. */
export interface Deployment {
  /** `provider/upstream_model`: the key of its health state, log rows and metrics. */
  id: string;
  weight: number;
  provider: Provider;
  /** The model's configuration as seen from this deployment (its provider, upstream model and prices). */
  model: ModelConfig;
  timeouts: UpstreamTimeouts;
  pricing: ModelPricing | undefined;
}

export interface Route {
  model: ModelConfig;
  deployments: Deployment[];
}

/** The routes to try for a model, in order: the model itself, then its fallbacks. */
export type RouteChain = readonly Route[];

function deploymentOf(
  model: ModelConfig,
  deployment: DeploymentConfig,
  provider: Provider,
  providerConfig: ProviderConfig,
): Deployment {
  const overrides = deployment.timeouts;
  // In-process providers (local models) have no network phases; their queue and generations have their own timeouts.
  const providerTimeouts =
    providerConfig.type === 'local' ? { connectMs: 0, firstByteMs: 0, idleMs: 0 } : providerConfig.timeouts;
  return {
    id: deployment.id,
    weight: deployment.weight,
    provider,
    model: {
      ...model,
      provider: deployment.provider,
      upstreamModel: deployment.upstreamModel,
      pricing: deployment.pricing,
      // How /v1/responses reaches this deployment: the model's setting, else its provider's.
      ...(model.responsesApi === undefined && providerConfig.type === 'openai'
        ? { responsesApi: providerConfig.responsesApi }
        : {}),
    },
    timeouts: {
      connectMs: overrides?.connectMs ?? providerTimeouts.connectMs,
      firstByteMs: overrides?.firstByteMs ?? providerTimeouts.firstByteMs,
      idleMs: overrides?.idleMs ?? providerTimeouts.idleMs,
    },
    pricing: deployment.pricing,
  };
}

export class Router {
  private readonly routes = new Map<string, Route>();
  /** Built once: the chain of a model is asked for on every request. */
  private readonly chains = new Map<string, RouteChain>();

  constructor(catalog: ModelCatalog, registry: ProviderRegistry, providers: readonly ProviderConfig[]) {
    const providerConfigs = new Map(providers.map((provider) => [provider.name, provider]));
    for (const [name, model] of catalog.byName) {
      const deployments: Deployment[] = [];
      for (const deployment of model.deployments) {
        const provider = registry.get(deployment.provider);
        const providerConfig = providerConfigs.get(deployment.provider);
        // The config schema guarantees every deployment names a defined provider.
        if (provider && providerConfig) deployments.push(deploymentOf(model, deployment, provider, providerConfig));
      }
      this.routes.set(name, { model, deployments });
    }
    for (const [name, route] of this.routes) {
      const chain = [route];
      for (const fallback of route.model.fallbacks) {
        const next = this.routes.get(fallback);
        if (next && !chain.includes(next)) chain.push(next);
      }
      this.chains.set(name, chain);
    }
  }

  /** The route of a public model name; 404 model_not_found when there is none. */
  resolve(model: string): Route {
    const route = this.routes.get(model);
    if (!route) throw modelNotFound(model);
    return route;
  }

  /** The routes to try, in order: the model itself, then its fallbacks (their own fallbacks are not followed). */
  chain(model: string): RouteChain {
    const chain = this.chains.get(model);
    if (!chain) throw modelNotFound(model);
    return chain;
  }

  /** Every deployment id, for metrics. */
  deploymentIds(): string[] {
    return [...new Set([...this.routes.values()].flatMap((route) => route.deployments.map((item) => item.id)))];
  }
}
