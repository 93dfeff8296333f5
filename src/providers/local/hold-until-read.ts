import type { CancelSignal } from '../../server/cancellation.js';
import { cancelled, type SlotLease } from './slot-pool.js';

/**
 * Holds a generation's slot between acceptance and the first read of its stream: should the stream never be read
 * (the client left in between), the slot still comes back when the request is cancelled; a stream being read
 * releases it itself, once its generation has stopped. The returned claim is the reader's first step.
 */
export function holdUntilRead(lease: SlotLease<unknown>, signal: CancelSignal): () => void {
  if (signal.aborted) {
    lease.release();
    throw cancelled();
  }
  let state: 'accepted' | 'reading' | 'abandoned' = 'accepted';
  signal.addEventListener(
    'abort',
    () => {
      if (state !== 'accepted') return;
      state = 'abandoned';
      lease.release();
    },
    { once: true },
  );
  return () => {
    if (state === 'abandoned') throw cancelled();
    state = 'reading';
  };
}
