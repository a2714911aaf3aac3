import { Button, Center, Divider, Paper, PasswordInput, Stack, TextInput, Title } from '@mantine/core';
import { FormEvent, useState } from 'react';
import { ApiError, api } from '../api/admin-client';
import type { Me } from '../api/admin-types';

/**
 * Sign-in: single sign-on at the organisation's identity provider (the admin API's
 * /v1/auth/sso/:org/start, back here with a session cookie), or an admin token (tga_… or the
 * bootstrap token) checked against GET /v1/auth/session and kept in sessionStorage for this tab.
 */
export function SignInPage({ onSignedIn }: { onSignedIn: (token: string) => void }) {
  const [token, setToken] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [org, setOrg] = useState('');

  function startSso(e: FormEvent) {
    e.preventDefault();
    const slug = org.trim();
    if (!slug) return;
    const returnTo = window.location.pathname.startsWith('/console') ? window.location.pathname : '/console/';
    window.location.assign(`/v1/auth/sso/${encodeURIComponent(slug)}/start?returnTo=${encodeURIComponent(returnTo)}`);
  }

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
      await api<Me>('GET', '/v1/auth/session', undefined, t, true);
      onSignedIn(t);
    } catch (err) {
      setError(
        err instanceof ApiError && err.status === 401
          ? 'That token is not valid (unknown, revoked or expired).'
          : String((err as Error).message),
      );
    } finally {
      setBusy(false);
    }
  }

  return (
    <Center mih="100vh" p="md" component="main">
      <Paper withBorder shadow="sm" p="xl" w={420}>
        <Stack>
          <Title order={1} size="h3">
            Sign in to the Tollgate console
          </Title>
          <form onSubmit={startSso} noValidate>
            <Stack gap="sm">
              <TextInput
                label="Organisation"
                description="Its short name (slug); you sign in at its identity provider"
                name="org"
                autoComplete="organization"
                value={org}
                onChange={(e) => setOrg(e.currentTarget.value)}
                data-testid="sso-org"
              />
              <Button type="submit" disabled={!org.trim()}>
                Continue with single sign-on
              </Button>
            </Stack>
          </form>
          <Divider label="or with an admin token" labelPosition="center" />
          <form onSubmit={submit} noValidate>
            <Stack gap="sm">
              <PasswordInput
                label="Admin token"
                description="Kept in this browser tab only, sent as a bearer token"
                name="token"
                autoComplete="off"
                value={token}
                onChange={(e) => setToken(e.currentTarget.value)}
                error={error ?? undefined}
                data-testid="token-input"
              />
              <Button type="submit" variant="default" loading={busy}>
                Sign in with token
              </Button>
            </Stack>
          </form>
        </Stack>
      </Paper>
    </Center>
  );
}
