import { Alert, Button, Center, Divider, Paper, PasswordInput, Stack, TextInput, Title } from '@mantine/core';
import { FormEvent, useState } from 'react';
import { ApiError, answer, signInApi } from '../api/admin-client';

// The organisation last tried in this tab, so a failed sign-in comes back with it filled in.
const SSO_ORG_KEY = 'tollgate.console.ssoOrg';

/** What the admin API's SSO routes mean by `?signInError=` when they send a browser back here. */
const SIGN_IN_ERRORS: Record<string, string> = {
  unknown_org:
    'No organisation with that short name signs in with single sign-on here. Check the name, or sign in with an admin token.',
  idp_refused:
    'Your identity provider did not sign you in (it was cancelled or refused there). Try again, or ask your administrator.',
  idp_unavailable: 'Your organisation’s identity provider could not be reached. Try again in a moment.',
  unknown_user:
    'Your identity provider signed you in, but this organisation has no active Tollgate account with your email. Ask an administrator to add you.',
  no_role:
    'Your Tollgate account holds no role in this organisation yet (no team, no org role). Ask an administrator to add you to a team.',
  not_platform_admin: 'That account is not a platform admin of this Tollgate.',
  other_browser: 'This sign-in was started in another browser or tab. Start it again here.',
  failed: 'Single sign-on did not finish (it expired, was used already, or did not verify). Start it again.',
};

/** The error the SSO callback passed back in the address, once: it leaves the address at once. */
function takeSignInError(): string | null {
  const url = new URL(window.location.href);
  const code = url.searchParams.get('signInError');
  if (code === null) return null;
  url.searchParams.delete('signInError');
  window.history.replaceState(window.history.state, '', `${url.pathname}${url.search}${url.hash}`);
  // Own keys only: `__proto__` or `constructor` in a crafted link must not reach the page.
  return Object.hasOwn(SIGN_IN_ERRORS, code) ? SIGN_IN_ERRORS[code] : SIGN_IN_ERRORS.failed;
}

/**
 * Sign-in: single sign-on at the organisation's identity provider (the admin API's
 * /v1/auth/sso/:org/start, back here with a session cookie), or an admin token (tga_… or the
 * bootstrap token) checked against GET /v1/auth/session and kept in sessionStorage for this tab.
 */
export function SignInPage({ onSignedIn }: { onSignedIn: (token: string) => void }) {
  const [token, setToken] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [org, setOrg] = useState(() => sessionStorage.getItem(SSO_ORG_KEY) ?? '');
  const [ssoError] = useState(takeSignInError);

  function startSso(e: FormEvent) {
    e.preventDefault();
    const slug = org.trim();
    if (!slug) return;
    sessionStorage.setItem(SSO_ORG_KEY, slug);
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
      await answer(signInApi.GET('/v1/auth/session', { headers: { Authorization: `Bearer ${t}` } }));
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
          {ssoError && (
            <Alert color="red" variant="light" title="Single sign-on did not work" data-testid="sso-error">
              {ssoError}
            </Alert>
          )}
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
