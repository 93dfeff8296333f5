import type { ProviderType } from '../../../config/schema.js';
import { requestError } from './request-error.js';

/** The provider types a Messages request is translated for (Anthropic upstreams receive it as it came). */
export type TranslationTarget = Exclude<ProviderType, 'anthropic'>;

/** Something the chat format (or the target provider) cannot express: a 400 naming it, never silently dropped. */
export function untranslatable(path: string, what: string, target: TranslationTarget): never {
  throw requestError(path, `${what} cannot be sent to this model (provider type: ${target}).`, 'unsupported_value');
}
