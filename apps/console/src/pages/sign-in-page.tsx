import { Alert, Button, Center, Paper, PasswordInput, Stack, Text, Title } from '@mantine/core';
import { FormEvent, useState } from 'react';
import { ApiError, api } from '../api/admin-client';
import type { Me } from '../api/admin-types';

/**
 * Interim sign-in: paste an admin token (tga_… or the bootstrap token). It is checked against
 * GET /v1/me and kept in sessionStorage for this tab only. Single sign-on through the org's
 * identity provider replaces this page once the admin API has a session cookie.
 */
export function SignInPage({ onSignedIn }: { onSignedIn: (token: string) => void }) {
  const [token, setToken] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function submit(e: FormEvent) {
    e.preventDefault();
    const t = token.trim();
    if (!t) {
      setError('Paste an admin token.');
      return;
    }
    setBusy(true);
    setError(null);
    try {
      await api<Me>('GET', '/v1/me', undefined, t);
      onSignedIn(t);
    } catch (err) {
      setError(err instanceof ApiError && err.status === 401 ? 'That token is not valid (unknown, revoked or expired).' : String((err as Error).message));
    } finally {
      setBusy(false);
    }
  }

  return (
    <Center mih="100vh" p="md" component="main">
      <Paper withBorder shadow="sm" p="xl" w={420}>
        <form onSubmit={submit} noValidate>
          <Stack>
            <Title order={1} size="h3">
              Sign in to the Tollgate console
            </Title>
            <Text size="sm" c="gray.8">
              Paste an admin token. It stays in this browser tab only and is sent to the admin API as a bearer token.
            </Text>
            <PasswordInput
              label="Admin token"
              name="token"
              autoComplete="off"
              value={token}
              onChange={(e) => setToken(e.currentTarget.value)}
              error={error ?? undefined}
              data-testid="token-input"
            />
            <Button type="submit" loading={busy}>
              Sign in
            </Button>
            <Alert color="gray" variant="light" title="Interim sign-in">
              <Text size="xs">Single sign-on through your organisation&apos;s identity provider will replace this step.</Text>
            </Alert>
          </Stack>
        </form>
      </Paper>
    </Center>
  );
}
