import { useState, type FormEvent } from 'react';
import { toApiError } from '../api/admin-client';
import { useFieldErrors } from './field-errors';

/**
 * A form's submit: `onSubmit(action)` is the form's handler. The form is busy while `action` runs,
 * a refusal from an earlier try is cleared, and the API's refusal is shown at the input it names
 * (`at`) or in the form's alert (`elsewhere`). `action` may return early when a check of its own
 * fails; nothing is sent then.
 */
export function useFormSubmit(shownAt: readonly string[]) {
  const errors = useFieldErrors(shownAt);
  const [busy, setBusy] = useState(false);
  const onSubmit = (action: () => Promise<unknown>) => async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    errors.setError(null);
    try {
      await action();
    } catch (err) {
      errors.setError(toApiError(err));
    } finally {
      setBusy(false);
    }
  };
  return { ...errors, busy, onSubmit };
}
