import type { errors, Pool as PoolType, util } from 'undici';
import undiciErrors from 'undici/lib/core/errors.js';
import undiciUtil from 'undici/lib/core/util.js';
import PoolClass from 'undici/lib/dispatcher/pool.js';

/**
 * The parts of undici the gateway uses, loaded from their own files: undici's index loads all of it at start-up
 * (fetch, WebSocket, caches, mocks, proxies, interceptors) and all of it stays resident (docs/performance.md,
 * "Memory"; `npm run lint` refuses a value import of the index from src/). The types are undici's own. Both ways of
 * calling go through `dispatch` with a handler of the gateway's own (upstream/client.ts), so none of undici's API
 * layer (`request` and its body stream) is loaded.
 */

export const Pool = PoolClass as typeof PoolType;
export type Pool = PoolType;
export const undiciErrorClasses = undiciErrors as typeof errors;
export const parseHeaders = (undiciUtil as typeof util).parseHeaders;
