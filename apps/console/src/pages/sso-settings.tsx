import {
  Button,
  Card,
  Code,
  CopyButton,
  Group,
  PasswordInput,
  Select,
  Stack,
  Switch,
  Text,
  TextInput,
  Title,
} from '@mantine/core';
import { useState } from 'react';
import { ApiError, adminApi, answer } from '../api/admin-client';
import type { components } from '../api/admin-api.gen';
import { ConfirmModal } from '../components/confirm-modal';
import { FormError } from '../components/form-actions';
import { ErrorState, LoadingState } from '../components/page-states';
import { formatTimestamp } from '../lib/dates';
import { useFormSubmit } from '../lib/form-submit';
import { useLoad } from '../lib/use-load';
import { useSession } from '../session';

type IdentityProvider = components['schemas']['IdentityProviderView'];

/**
 * The organisation's single sign-on (`…/identity-provider`): every role of the org reads it (the API's Read
 * level), only org admins set or remove it. The client secret is write-only: the API never answers it, and
 * the form never holds it after a save.
 */
export function SsoSettings({
  mayManage,
  teams,
}: {
  mayManage: boolean;
  /** The org's teams (the settings page reads them once for its sections). */
  teams: components['schemas']['TeamView'][];
}) {
  const { org } = useSession();
  const loaded = useLoad(
    () =>
      answer(adminApi.GET('/v1/orgs/{orgId}/identity-provider', { params: { path: { orgId: org.id } } })).catch(
        (err: unknown) => {
          // 404: none set yet, which is a state of the page, not an error.
          if (err instanceof ApiError && err.status === 404) return null;
          throw err;
        },
      ),
    [org.id],
  );
  // Kept here: a save reloads the provider and so remounts the form.
  const [done, setDone] = useState<string | null>(null);

  return (
    <Card withBorder component="section" aria-labelledby="sso-settings-title" data-testid="sso-settings">
      <Title order={2} size="h4" id="sso-settings-title" mb="xs">
        Single sign-on
      </Title>
      <Text size="sm" c="dimmed" mb="sm">
        People sign in to the console and authorise MCP clients at the organisation&apos;s OpenID Connect provider; they
        are matched to Tollgate&apos;s people by verified email.
      </Text>
      {loaded.state === 'loading' && <LoadingState label="Loading single sign-on…" />}
      {loaded.state === 'error' && <ErrorState error={loaded.error} what="single sign-on" onRetry={loaded.reload} />}
      {loaded.state === 'ready' &&
        (mayManage ? (
          <SsoForm
            key={loaded.data?.updatedAt ?? 'none'}
            provider={loaded.data}
            teams={teams}
            onChanged={(what) => {
              setDone(what);
              loaded.reload();
            }}
          />
        ) : (
          <SsoReadOnly provider={loaded.data} />
        ))}
      {done && (
        <Text size="sm" role="status" mt="sm" data-testid="sso-done">
          {done}
        </Text>
      )}
    </Card>
  );
}

function RedirectUris({ provider }: { provider: IdentityProvider }) {
  const uris = [
    { label: 'Console and admin API sign-in', value: provider.sessionRedirectUri },
    { label: 'MCP client sign-in', value: provider.redirectUri },
  ].filter((u): u is { label: string; value: string } => typeof u.value === 'string');
  if (uris.length === 0) {
    return (
      <Text size="sm" c="dimmed" data-testid="sso-redirect-uris">
        The redirect URIs to register at the provider show here once the admin API knows its public address
        (ADMIN_PUBLIC_URL).
      </Text>
    );
  }
  return (
    <Stack gap={4} data-testid="sso-redirect-uris">
      <Text size="sm" fw={600}>
        Redirect URIs to register at the provider
      </Text>
      {uris.map((u) => (
        <Group key={u.label} gap="xs" wrap="nowrap">
          <Text size="sm">{u.label}:</Text>
          <Code style={{ wordBreak: 'break-all' }}>{u.value}</Code>
          <CopyButton value={u.value}>
            {({ copied, copy }) => (
              <Button size="compact-xs" variant="default" onClick={copy} aria-label={`Copy the ${u.label} URI`}>
                {copied ? 'Copied' : 'Copy'}
              </Button>
            )}
          </CopyButton>
        </Group>
      ))}
    </Stack>
  );
}

function SsoReadOnly({ provider }: { provider: IdentityProvider | null }) {
  const { org } = useSession();
  if (!provider) {
    return (
      <Text size="sm" data-testid="sso-none">
        Not set up: people sign in with codes or admin tokens. An org admin sets it here.
      </Text>
    );
  }
  return (
    <Stack gap="xs" data-testid="sso-read-only">
      <Text size="sm">
        Issuer: <Code data-testid="sso-issuer-shown">{provider.issuer}</Code>
      </Text>
      <Text size="sm">
        Client id: <Code>{provider.clientId}</Code> · email claim <Code>{provider.emailClaim}</Code>
      </Text>
      <Text size="sm">
        {provider.createUsers
          ? 'People the provider vouches for are added on first sign-in.'
          : 'Only people already in Tollgate can sign in.'}{' '}
        Changed {formatTimestamp(provider.updatedAt, org.timeZone)}. Only org admins change it.
      </Text>
    </Stack>
  );
}

const SSO_FIELDS = ['issuer', 'clientId', 'clientSecret', 'emailClaim', 'createUsers', 'newUserTeamId'];

function SsoForm({
  provider,
  teams,
  onChanged,
}: {
  provider: IdentityProvider | null;
  teams: components['schemas']['TeamView'][];
  onChanged: (what: string) => void;
}) {
  const { org } = useSession();
  const [issuer, setIssuer] = useState(provider?.issuer ?? '');
  const [clientId, setClientId] = useState(provider?.clientId ?? '');
  // Write-only: starts empty (the API never answers it) and is emptied again by the save's reload.
  const [clientSecret, setClientSecret] = useState('');
  const [emailClaim, setEmailClaim] = useState(provider?.emailClaim ?? 'email');
  const [createUsers, setCreateUsers] = useState(provider?.createUsers ?? false);
  const [newUserTeamId, setNewUserTeamId] = useState<string | null>(provider?.newUserTeamId ?? null);
  const [removing, setRemoving] = useState(false);
  const form = useFormSubmit(SSO_FIELDS);

  const changed =
    !provider ||
    clientSecret !== '' ||
    issuer.trim() !== provider.issuer ||
    clientId.trim() !== provider.clientId ||
    emailClaim.trim() !== provider.emailClaim ||
    createUsers !== provider.createUsers ||
    (createUsers && newUserTeamId !== provider.newUserTeamId);

  const save = form.onSubmit(async () => {
    await answer(
      adminApi.PUT('/v1/orgs/{orgId}/identity-provider', {
        params: { path: { orgId: org.id } },
        body: {
          issuer: issuer.trim(),
          clientId: clientId.trim(),
          ...(clientSecret ? { clientSecret } : {}),
          emailClaim: emailClaim.trim() || 'email',
          createUsers,
          newUserTeamId: createUsers ? newUserTeamId : null,
        },
      }),
    );
    setClientSecret('');
    onChanged(provider ? 'Single sign-on saved.' : 'Single sign-on is set up.');
  });

  // The confirmation is outside the form: its own form's submit would bubble (through the portal) to this one.
  const formShown = (
    <form onSubmit={save} noValidate aria-label="Single sign-on settings">
      <Stack maw={560}>
        {provider && <RedirectUris provider={provider} />}
        <TextInput
          label="Issuer"
          description="The provider's OpenID Connect issuer URL (its /.well-known/openid-configuration is read)"
          placeholder="https://login.example.com"
          value={issuer}
          onChange={(e) => setIssuer(e.currentTarget.value)}
          error={form.at('issuer')}
          required
          data-testid="sso-issuer"
        />
        <TextInput
          label="Client id"
          value={clientId}
          onChange={(e) => setClientId(e.currentTarget.value)}
          error={form.at('clientId')}
          required
          data-testid="sso-client-id"
        />
        <PasswordInput
          label="Client secret"
          description={
            provider
              ? 'Write-only: a secret is stored and never shown. Leave empty to keep it; type one to replace it.'
              : 'Write-only: kept encrypted and never shown again'
          }
          placeholder={provider ? 'Stored (hidden)' : undefined}
          value={clientSecret}
          onChange={(e) => setClientSecret(e.currentTarget.value)}
          error={form.at('clientSecret')}
          required={!provider}
          autoComplete="new-password"
          data-testid="sso-client-secret"
        />
        <TextInput
          label="Email claim"
          description="The ID-token claim people are matched by (`email` needs `email_verified: true`)"
          value={emailClaim}
          onChange={(e) => setEmailClaim(e.currentTarget.value)}
          error={form.at('emailClaim')}
          data-testid="sso-email-claim"
        />
        <Switch
          label="Add people the provider vouches for on their first sign-in"
          checked={createUsers}
          onChange={(e) => setCreateUsers(e.currentTarget.checked)}
          error={form.at('createUsers')}
          data-testid="sso-create-users"
        />
        {createUsers && (
          <Select
            label="They join this team, as members"
            data={teams.map((t) => ({ value: t.id, label: t.name }))}
            value={newUserTeamId}
            onChange={setNewUserTeamId}
            error={form.at('newUserTeamId')}
            placeholder={teams.length ? 'Choose a team' : 'Create a team first (Teams and people)'}
            data-testid="sso-new-user-team"
          />
        )}
        <FormError error={form.elsewhere} testId="sso-error" />
        <Group>
          <Button
            type="submit"
            loading={form.busy}
            disabled={!changed || !issuer.trim() || !clientId.trim() || (!provider && !clientSecret)}
            data-testid="sso-save"
          >
            {provider ? 'Save single sign-on' : 'Set up single sign-on'}
          </Button>
          {provider && (
            <Button variant="default" color="red" onClick={() => setRemoving(true)} data-testid="sso-remove">
              Remove
            </Button>
          )}
        </Group>
      </Stack>
    </form>
  );
  return (
    <>
      {formShown}
      {removing && (
        <ConfirmModal
          title="Remove single sign-on?"
          confirmLabel="Remove single sign-on"
          testId="confirm-remove-sso"
          onClose={() => setRemoving(false)}
          onConfirm={async () => {
            await answer(
              adminApi.DELETE('/v1/orgs/{orgId}/identity-provider', { params: { path: { orgId: org.id } } }),
            );
            setRemoving(false);
            onChanged('Single sign-on removed.');
          }}
        >
          <Text size="sm">People can no longer sign in through the provider. Admin tokens keep working.</Text>
        </ConfirmModal>
      )}
    </>
  );
}
