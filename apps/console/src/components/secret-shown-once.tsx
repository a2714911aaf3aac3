import { Alert, Button, Code, CopyButton, Group, Stack } from '@mantine/core';
import { ReactNode } from 'react';
import { ConsoleModal } from './console-modal';

/**
 * The dialog that shows a new secret (a key, an admin token, a webhook's signing secret) the one
 * time the API returns it: what to do with it, the secret with a Copy button, then Done.
 */
export function SecretShownOnce({
  title,
  warning,
  secret,
  onClose,
  testId,
  copyTestId,
  children,
  after,
}: {
  /** The dialog's title, e.g. "Key issued". */
  title: string;
  /** The warning's title, e.g. "Copy the key now". */
  warning: string;
  secret: string;
  onClose: () => void;
  /** On the secret's text. */
  testId: string;
  copyTestId?: string;
  /** Why it is shown once and what checks it (the warning's text). */
  children: ReactNode;
  /** A note under the secret, e.g. how agents send it. */
  after?: ReactNode;
}) {
  return (
    <ConsoleModal onClose={onClose} title={title} size="lg">
      <Stack>
        <Alert color="yellow" title={warning} role="status" styles={{ title: { color: 'var(--tg-strong)' } }}>
          {children}
        </Alert>
        <Group wrap="nowrap" align="center">
          <Code block style={{ flex: 1, wordBreak: 'break-all' }} data-testid={testId}>
            {secret}
          </Code>
          <CopyButton value={secret}>
            {({ copied, copy }) => (
              <Button onClick={copy} color={copied ? 'teal.9' : 'indigo'} data-testid={copyTestId}>
                {copied ? 'Copied' : 'Copy'}
              </Button>
            )}
          </CopyButton>
        </Group>
        {after}
        <Group justify="flex-end">
          <Button onClick={onClose}>Done</Button>
        </Group>
      </Stack>
    </ConsoleModal>
  );
}
