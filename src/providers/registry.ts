import type { Config, ProviderConfig } from '../config/schema.js';
import { createOpenAiProvider } from './openai/index.js';
import type { Provider, ProviderDependencies, ProviderFactory } from './provider.js';

/** Provider types and their adapters. A new provider is one folder plus one line here. */
const factories = {
  openai: createOpenAiProvider,
} satisfies Record<ProviderConfig['type'], ProviderFactory>;

export class ProviderRegistry {
  private readonly providers = new Map<string, Provider>();

  constructor(config: Config, dependencies: ProviderDependencies) {
    for (const providerConfig of config.providers) {
      this.providers.set(providerConfig.name, factories[providerConfig.type](providerConfig, dependencies));
    }
  }

  get(name: string): Provider | undefined {
    return this.providers.get(name);
  }

  async close(): Promise<void> {
    await Promise.all([...this.providers.values()].map((provider) => provider.close?.()));
  }
}
