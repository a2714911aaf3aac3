import { useCallback, useEffect, useState } from 'react';
import { ApiError } from '../api/admin-client';

export type Loaded<T> = { state: 'loading' } | { state: 'error'; error: ApiError } | { state: 'ready'; data: T };

/** Runs `load` when `deps` change; an answer to an older request is dropped. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): Loaded<T> & { reload: () => void } {
  const [result, setResult] = useState<Loaded<T>>({ state: 'loading' });
  const [round, setRound] = useState(0);
  useEffect(() => {
    let current = true;
    setResult({ state: 'loading' });
    load().then(
      (data) => current && setResult({ state: 'ready', data }),
      (err: unknown) => current && setResult({ state: 'error', error: err instanceof ApiError ? err : new ApiError(0, String(err)) }),
    );
    return () => {
      current = false;
    };
  }, [...deps, round]);
  const reload = useCallback(() => setRound((r) => r + 1), []);
  return { ...result, reload };
}
