import { useCallback, useEffect, useRef, useState } from 'react';
import { ApiError, toApiError } from '../api/admin-client';

export type Loaded<T> = { state: 'loading' } | { state: 'error'; error: ApiError } | { state: 'ready'; data: T };

/**
 * Runs `load` when `deps` change (showing the loading state) or on `reload()` (keeping what is
 * shown until the new answer arrives, so open dialogs stay open). An older answer is dropped.
 */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): Loaded<T> & { reload: () => void } {
  const [result, setResult] = useState<Loaded<T>>({ state: 'loading' });
  const [round, setRound] = useState(0);
  const refreshing = useRef(false);
  useEffect(() => {
    let current = true;
    if (!refreshing.current) setResult({ state: 'loading' });
    refreshing.current = false;
    load().then(
      (data) => current && setResult({ state: 'ready', data }),
      (err: unknown) => current && setResult({ state: 'error', error: toApiError(err) }),
    );
    return () => {
      current = false;
    };
  }, [...deps, round]);
  const reload = useCallback(() => {
    refreshing.current = true;
    setRound((r) => r + 1);
  }, []);
  return { ...result, reload };
}
