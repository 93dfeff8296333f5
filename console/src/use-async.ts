import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiFailure } from './api.js';

export interface AsyncState<T> {
  data: T | undefined;
  error: ApiFailure | undefined;
  loading: boolean;
  reload(): void;
}

/** Loads data when the dependencies change; a newer load wins over an older one still in flight. */
export function useAsync<T>(load: () => Promise<T>, dependencies: readonly unknown[]): AsyncState<T> {
  const [state, setState] = useState<{ data: T | undefined; error: ApiFailure | undefined; loading: boolean }>({
    data: undefined,
    error: undefined,
    loading: true,
  });
  const generation = useRef(0);
  const run = useCallback(() => {
    const mine = ++generation.current;
    setState((previous) => ({ ...previous, loading: true }));
    load().then(
      (data) => {
        if (mine === generation.current) setState({ data, error: undefined, loading: false });
      },
      (error: unknown) => {
        if (mine !== generation.current) return;
        const failure =
          error instanceof ApiFailure
            ? error
            : new ApiFailure(0, String((error as Error)?.message ?? error), null, null);
        setState((previous) => ({ data: previous.data, error: failure, loading: false }));
      },
    );
  }, dependencies);
  useEffect(run, [run]);
  return { ...state, reload: run };
}

/** Turns anything thrown into a message for the page. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
