import { Button, ButtonProps, ElementProps } from '@mantine/core';

type RowActionProps = ButtonProps &
  ElementProps<'button', keyof ButtonProps> & {
    /** Red text for an action that removes or stops something (it opens a confirmation). */
    danger?: boolean;
  };

/** A small text button in a table row's actions; give it an aria-label naming the row. */
export function RowAction({ danger = false, ...props }: RowActionProps) {
  return <Button size="xs" variant="subtle" {...(danger ? { color: 'red', c: 'var(--tg-danger)' } : {})} {...props} />;
}
