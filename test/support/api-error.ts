import { ApiError } from '../../src/errors/api-error.js';

/** The ApiError `run` throws; fails the test when it returns or throws something else. */
export function apiErrorOf(run: () => unknown): ApiError {
  try {
    run();
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error('expected an ApiError');
}
