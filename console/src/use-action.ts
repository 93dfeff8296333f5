import { useState } from 'preact/hooks';

/**
 * Something the user started (a form sent, a confirmation): `busy` while it runs, so it is not sent twice, and its
 * failure kept for an ErrorMessage. A check that fails before anything is sent sets `error` itself.
 */
export function useAction() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const run = async (action: () => Promise<unknown>): Promise<void> => {
    setBusy(true);
    setError(undefined);
    try {
      await action();
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, setError, run };
}
