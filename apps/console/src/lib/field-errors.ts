import { useState } from 'react';
import type { ApiError } from '../api/admin-client';

/**
 * A form's API refusal, shown at the input it names (`at`) or, when no input of `shownAt`
 * names its field, in the form's alert (`elsewhere`).
 */
export function useFieldErrors(shownAt: readonly string[]) {
  const [error, setError] = useState<ApiError | null>(null);
  return {
    error,
    setError,
    at: (field: string) => errorAt(error, field),
    elsewhere: errorElsewhere(error, shownAt),
    /** Typing again takes back a field's refusal (it was about the old value); a 412 stays. */
    onFormInput: () => {
      if (error && error.status !== 412) setError(null);
    },
  };
}

/** The refusal's message when it names `field` (what an input's `error` takes), else undefined. */
export function errorAt(error: ApiError | null, field: string): string | undefined {
  return error?.field === field ? error.message : undefined;
}

/** The refusal when none of the inputs `shownAt` names its field (the form's alert shows it), else null. */
export function errorElsewhere(error: ApiError | null, shownAt: readonly string[]): ApiError | null {
  return error && !shownAt.includes(error.field ?? '') ? error : null;
}
