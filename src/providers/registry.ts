import type { Config, ProviderConfig, ProviderType } from '../config/schema.js';
import type { ProviderLoad } from '../observability/metrics.js';
import { createAnthropicProvider } from './anthropic/index.js';
import { createGeminiProvider } from './gemini/index.js';
import { createLocalProvider } from './local/index.js';
import { createOpenAiProvider } from './openai/index.js';
import type { Provider, ProviderDependencies, ProviderFactory } from './provider.js';

/** Provider types and their adapters. A new provider is one folder plus one line here. */
const factories = {
  openai: createOpenAiProvider,
  anthropic: createAnthropicProvider,
  gemini: createGeminiProvider,
  local: createLocalProvider,
} satisfies { [Type in ProviderType]: ProviderFactory<Type> };

function createProvider(config: ProviderConfig, dependencies: ProviderDependencies): Provider {
  // `factories` pairs each type with the factory for that type's configuration, so the cast is exact.
  const factory = factories[config.type] as ProviderFactory;
  return factory(config as never, dependencies);
}

export class ProviderRegistry {
  private readonly providers = new Map<string, Provider>();

  constructor(config: Config, dependencies: ProviderDependencies) {
    for (const providerConfig of config.providers) {
      this.providers.set(providerConfig.name, createProvider(providerConfig, dependencies));
    }
  }

  get(name: string): Provider | undefined {
    return this.providers.get(name);
  }

  /** Current load of the providers that have a fixed capacity (for metrics). */
  load(): ProviderLoad[] {
    const loads: ProviderLoad[] = [];
    for (const provider of this.providers.values()) {
      const load = provider.load?.();
      if (load) loads.push({ provider: provider.name, ...load });
    }
    return loads;
  }

  /** Lets every provider prepare (load local models) before the server accepts requests. */
  async warmUp(): Promise<void> {
    await Promise.all([...this.providers.values()].map((provider) => provider.warmUp?.()));
  }

  async close(): Promise<void> {
    await Promise.all([...this.providers.values()].map((provider) => provider.close?.()));
  }
}
