import { Alert, Text } from '@mantine/core';
import { ReactNode } from 'react';

/** An edit form's notice that its object changed since the form opened (a 412), so nothing was saved. */
export function StaleAlert({ testId, children }: { testId?: string; children: ReactNode }) {
  return (
    <Alert
      color="orange"
      role="alert"
      title="Changed by someone else"
      data-testid={testId}
      styles={{ title: { color: 'var(--tg-strong)' } }}
    >
      <Text size="sm" c="var(--tg-strong)">
        {children}
      </Text>
    </Alert>
  );
}
