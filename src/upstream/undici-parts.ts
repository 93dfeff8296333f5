import type { Dispatcher, errors, Pool as PoolType, util } from 'undici';
import requestOnDispatcher from 'undici/lib/api/api-request.js';
import undiciErrors from 'undici/lib/core/errors.js';
import undiciUtil from 'undici/lib/core/util.js';
import PoolClass from 'undici/lib/dispatcher/pool.js';

/**
 * The parts of undici the gateway uses, loaded from their own files: undici's index loads all of it at start-up
 * (fetch, WebSocket, caches, mocks, proxies, interceptors) and all of it stays resident (docs/performance.md,
 * "Memory"; `npm run lint` refuses a value import of the index from src/). The types are undici's own; `requestOn` is
 * the `request` method undici's index adds to every dispatcher's prototype, called on the pool here instead.
 */

export const Pool = PoolClass as typeof PoolType;
export type Pool = PoolType;
export const undiciErrorClasses = undiciErrors as typeof errors;
export const parseHeaders = (undiciUtil as typeof util).parseHeaders;

/** `dispatcher.request(options)` as undici's index defines it. */
export function requestOn(
  dispatcher: Dispatcher,
  options: Dispatcher.RequestOptions,
): Promise<Dispatcher.ResponseData> {
  const request = requestOnDispatcher as (
    this: Dispatcher,
    options: Dispatcher.RequestOptions,
  ) => Promise<Dispatcher.ResponseData>;
  return request.call(dispatcher, options);
}
