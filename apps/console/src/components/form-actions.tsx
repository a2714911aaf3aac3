import { Alert, Button, Group } from '@mantine/core';
import type { ApiError } from '../api/admin-client';

/** The form's red alert for an API refusal that no input shows; nothing without one. */
export function FormError({ error, testId }: { error: ApiError | null; testId?: string }) {
  if (!error) return null;
  return (
    <Alert color="red" role="alert" data-testid={testId}>
      {error.message}
    </Alert>
  );
}

/** A dialog form's footer: Cancel (or another way out), then the named submit button. */
export function FormActions({
  submitLabel,
  submitTestId,
  busy = false,
  disabled = false,
  destructive = false,
  onCancel,
  cancelLabel = 'Cancel',
  focusCancel = false,
}: {
  /** Verb and object, e.g. "Issue key". */
  submitLabel: string;
  submitTestId?: string;
  busy?: boolean;
  disabled?: boolean;
  /** Red submit for what cannot simply be undone. */
  destructive?: boolean;
  onCancel: () => void;
  cancelLabel?: string;
  /** Focus Cancel when the dialog opens, so Enter or a stray click changes nothing. */
  focusCancel?: boolean;
}) {
  return (
    <Group justify="flex-end">
      <Button variant="default" onClick={onCancel} data-autofocus={focusCancel || undefined}>
        {cancelLabel}
      </Button>
      <Button
        type="submit"
        color={destructive ? 'red.9' : undefined}
        loading={busy}
        disabled={disabled}
        data-testid={submitTestId}
      >
        {submitLabel}
      </Button>
    </Group>
  );
}
