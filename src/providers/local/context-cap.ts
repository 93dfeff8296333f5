/**
 * One request's context without a `context_size` setting: the model's training context, capped so memory stays
 * modest per slot. The built-in model's advertised `context_window` is this too, so both checks name one limit.
 */
export const defaultContextCap = 4096;
