import { FormEvent, ReactNode, useState } from 'react';
import { ApiError, toApiError } from '../api/admin-client';
import { errorElsewhere } from '../lib/field-errors';
import { FormActions, FormError } from './form-actions';
import { FormModal } from './form-modal';

export interface ConfirmModalProps {
  /** A question naming the action and its object, e.g. "Delete the upstream fx?" (the dialog's accessible name). */
  title: string;
  /** What happens and what is kept; a function receives the API's refusal to show at its own fields. */
  children: ReactNode | ((error: ApiError | null) => ReactNode);
  /** Verb and object, e.g. "Delete upstream": never a bare "OK". */
  confirmLabel: string;
  /** Runs the change; the caller closes the dialog when it resolves. A throw is shown here. */
  onConfirm: () => Promise<void>;
  onClose: () => void;
  /** Red confirm button for what cannot simply be undone (the default). */
  destructive?: boolean;
  confirmDisabled?: boolean;
  /** API error fields the children show at their own inputs (not repeated below them). */
  fieldsShown?: string[];
  testId?: string;
}

/**
 * The one confirmation dialog of the console: the question as title, the consequences, then
 * Cancel (focused first, so Enter or a stray click changes nothing) and the named action.
 */
export function ConfirmModal({
  title,
  children,
  confirmLabel,
  onConfirm,
  onClose,
  destructive = true,
  confirmDisabled = false,
  fieldsShown = [],
  testId = 'confirm-action',
}: ConfirmModalProps) {
  const [error, setError] = useState<ApiError | null>(null);
  const [busy, setBusy] = useState(false);

  async function confirm(e: FormEvent) {
    e.preventDefault();
    if (confirmDisabled || busy) return;
    setBusy(true);
    setError(null);
    try {
      await onConfirm();
    } catch (err) {
      setError(toApiError(err));
      setBusy(false);
    }
  }

  return (
    <FormModal title={title} onClose={onClose} onSubmit={confirm} testId="confirm-modal">
      {typeof children === 'function' ? children(error) : children}
      <FormError error={errorElsewhere(error, fieldsShown)} testId="confirm-error" />
      <FormActions
        submitLabel={confirmLabel}
        submitTestId={testId}
        busy={busy}
        disabled={confirmDisabled}
        destructive={destructive}
        onCancel={onClose}
        focusCancel
      />
    </FormModal>
  );
}
