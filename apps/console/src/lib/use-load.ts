import { useCallback, useEffect, useRef, useState } from 'react';
import { ApiError, toApiError } from '../api/admin-client';

export type Loaded<T> = { state: 'loading' } | { state: 'error'; error: ApiError } | { state: 'ready'; data: T };

const LOADING = { state: 'loading' } as const;

/** Whether two dependency lists hold the same values (compared as React compares effect deps). */
function sameDeps(a: readonly unknown[] | null, b: readonly unknown[]): boolean {
  return a !== null && a.length === b.length && a.every((v, i) => Object.is(v, b[i]));
}

/**
 * Runs `load` when `deps` change (showing the loading state) or on `reload()` (keeping what is
 * shown until the new answer arrives, so open dialogs stay open). An older answer is dropped.
 * Each answer remembers the deps it was loaded for: in the render where the deps change, before
 * the effect runs, the page is already loading instead of showing the last answer under the new
 * settings (page 2's label over page 1's rows).
 */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): Loaded<T> & { reload: () => void } {
  const [result, setResult] = useState<{ deps: unknown[] | null; loaded: Loaded<T> }>({ deps: null, loaded: LOADING });
  const [round, setRound] = useState(0);
  const refreshing = useRef(false);
  useEffect(() => {
    let current = true;
    if (!refreshing.current) setResult({ deps, loaded: LOADING });
    refreshing.current = false;
    load().then(
      (data) => current && setResult({ deps, loaded: { state: 'ready', data } }),
      (err: unknown) => current && setResult({ deps, loaded: { state: 'error', error: toApiError(err) } }),
    );
    return () => {
      current = false;
    };
  }, [...deps, round]);
  const reload = useCallback(() => {
    refreshing.current = true;
    setRound((r) => r + 1);
  }, []);
  return { ...(sameDeps(result.deps, deps) ? result.loaded : LOADING), reload };
}
