import { MantineSize, Stack } from '@mantine/core';
import { FormEvent, ReactNode } from 'react';
import { ConsoleModal } from './console-modal';

/** A dialog that is one form: the title names it, the close button is labelled, inputs stack. */
export function FormModal({
  title,
  size,
  onClose,
  onSubmit,
  onInput,
  testId,
  children,
}: {
  title: string;
  size?: MantineSize;
  onClose: () => void;
  onSubmit: (e: FormEvent) => void;
  /** Any input changed (e.g. to take back an API refusal about the old value). */
  onInput?: () => void;
  testId?: string;
  children: ReactNode;
}) {
  return (
    <ConsoleModal
      opened
      onClose={onClose}
      closeButtonProps={{ 'aria-label': 'Close' }}
      title={title}
      size={size}
      data-testid={testId}
    >
      {/* The forms check their own inputs and show the API's refusals, not the browser's bubbles. */}
      <form onSubmit={onSubmit} onChange={onInput} noValidate>
        <Stack>{children}</Stack>
      </form>
    </ConsoleModal>
  );
}
