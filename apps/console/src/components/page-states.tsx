import { Alert, Button, Center, Group, Loader, Stack, Text } from '@mantine/core';
import type { ReactNode } from 'react';
import type { ApiError } from '../api/admin-client';

export function LoadingState({ label }: { label: string }) {
  return (
    <Center py="xl" role="status" aria-live="polite" aria-busy="true">
      <Group gap="sm">
        <Loader size="sm" aria-hidden="true" />
        <Text c="gray.8">{label}</Text>
      </Group>
    </Center>
  );
}

export function ErrorState({ error, what, onRetry }: { error: ApiError; what: string; onRetry?: () => void }) {
  const hint =
    error.status === 403
      ? 'Your role may not see this. Ask an org admin if you need it.'
      : error.status === 503
        ? 'A dependency of the admin API is down; it answers again once it is back.'
        : error.status === 0
          ? 'No answer from the admin API.'
          : null;
  return (
    <Alert color="red" title={`Could not load ${what}`} role="alert" data-testid="error-state">
      <Stack gap="xs">
        <Text size="sm">{error.message}</Text>
        {hint && <Text size="sm">{hint}</Text>}
        {onRetry && (
          <Group>
            <Button size="xs" variant="white" color="red" onClick={onRetry}>
              Try again
            </Button>
          </Group>
        )}
      </Stack>
    </Alert>
  );
}

export function EmptyState({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <Stack align="center" gap={4} py="lg" data-testid="empty-state">
      <Text fw={600}>{title}</Text>
      {children && (
        <Text size="sm" c="gray.8" ta="center" maw={460}>
          {children}
        </Text>
      )}
    </Stack>
  );
}

/** Whose spend a page shows when the API scopes it to the caller: a team admin's team or a member's own calls. */
export function ScopeNote({ scope, teamName }: { scope: 'org' | 'team' | 'user'; teamName?: string }) {
  if (scope === 'org') return null;
  return (
    <Alert
      color="indigo"
      variant="light"
      data-testid="scope-note"
      title={scope === 'team' ? `Your team: ${teamName ?? '…'}` : 'Your own usage'}
    >
      <Text size="sm">
        {scope === 'team'
          ? 'Spend, budgets and calls of your team’s members and keys only; the rest of the organisation is not shown.'
          : 'Only the calls made with your own keys, and your own and your keys’ budgets.'}
      </Text>
    </Alert>
  );
}
