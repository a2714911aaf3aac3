import { Alert, Button, Center, Group, Loader, Stack, Text } from '@mantine/core';
import type { ReactNode } from 'react';
import type { ApiError } from '../api/admin-client';

export function LoadingState({ label }: { label: string }) {
  return (
    <Center py="xl" role="status" aria-live="polite" aria-busy="true">
      <Group gap="sm">
        <Loader size="sm" aria-hidden="true" />
        <Text c="dimmed">{label}</Text>
      </Group>
    </Center>
  );
}

export function ErrorState({
  error,
  what,
  onRetry,
  message,
  action,
}: {
  error: ApiError;
  what: string;
  onRetry?: () => void;
  /** Said instead of the API's message (e.g. one that lists raw ids). */
  message?: string;
  /** Something that can help, in place of a retry that cannot. */
  action?: ReactNode;
}) {
  const hint =
    error.status === 403
      ? 'Your role may not see this. Ask an org admin if you need it.'
      : error.status === 503
        ? 'A dependency of the admin API is down; it answers again once it is back.'
        : error.status === 0
          ? 'No answer from the admin API.'
          : null;
  // Asking again cannot turn a refusal or a bad request into an answer.
  const retry = error.status === 403 || error.status === 400 || error.status === 404 ? undefined : onRetry;
  return (
    <Alert color="red" title={`Could not load ${what}`} role="alert" data-testid="error-state">
      <Stack gap="xs">
        <Text size="sm">{message ?? error.message}</Text>
        {hint && <Text size="sm">{hint}</Text>}
        {(retry || action) && (
          <Group>
            {retry && (
              <Button size="xs" variant="white" color="red" onClick={retry}>
                Try again
              </Button>
            )}
            {action}
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
        <Text size="sm" c="dimmed" ta="center" maw={460}>
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
