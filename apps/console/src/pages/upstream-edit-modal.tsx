import { Checkbox, Code, Group, Select, Stack, Text, TextInput } from '@mantine/core';
import { useState } from 'react';
import { adminApi, answer } from '../api/admin-client';
import type { components } from '../api/admin-api.gen';
import { FormActions, FormError } from '../components/form-actions';
import { FormModal } from '../components/form-modal';
import { StaleAlert } from '../components/stale-alert';
import { useFormSubmit } from '../lib/form-submit';
import { authModeLabel, transportLabel } from '../lib/labels';
import {
  AUTH_MODES,
  SecretInput,
  SettingsInputs,
  type UpstreamDetail,
  type UpstreamSettings,
  numberOrUndefined,
} from './upstream-form-modals';

const EDIT_FIELDS = [
  'displayName',
  'url',
  'authMode',
  'oauth',
  'oauth.clientId',
  'oauth.clientSecret',
  'oauth.scope',
  'bearerToken',
  'headers',
  'removeHeaders',
  'syncIntervalSeconds',
  'callTimeoutMs',
  'outputTokenCap',
  'autoApproveTools',
  'exposeUnprefixed',
];
const REVIEW_SETTINGS = [
  { value: 'org', label: 'Follow the organisation' },
  { value: 'auto', label: 'Serve new or changed tools at once' },
  { value: 'review', label: 'Hold new or changed tools for review' },
];

/**
 * PATCH of what changed, with If-Match the version shown: a change made meanwhile is refused
 * (412) and the form offers to reload rather than overwrite it.
 */
export function EditUpstreamModal({
  upstream: u,
  onClose,
  onSaved,
}: {
  upstream: UpstreamDetail;
  onClose: () => void;
  onSaved: () => void;
}) {
  const [displayName, setDisplayName] = useState(u.displayName ?? '');
  const [url, setUrl] = useState(u.url ?? '');
  const [bearerToken, setBearerToken] = useState('');
  const [dropToken, setDropToken] = useState(false);
  const [removeHeaders, setRemoveHeaders] = useState<string[]>([]);
  const [headerName, setHeaderName] = useState('');
  const [headerValue, setHeaderValue] = useState('');
  const [settings, setSettings] = useState<UpstreamSettings>({
    syncIntervalSeconds: u.syncIntervalSeconds,
    callTimeoutMs: u.callTimeoutMs,
    outputTokenCap: u.outputTokenCap ?? '',
  });
  const [review, setReview] = useState(u.autoApproveTools === null ? 'org' : u.autoApproveTools ? 'auto' : 'review');
  const [unprefixed, setUnprefixed] = useState(u.exposeUnprefixed);
  const [authMode, setAuthMode] = useState<UpstreamDetail['authMode']>(u.authMode);
  // A dynamically registered client is Tollgate's own: the field starts empty (keep it) rather than showing it.
  const [clientId, setClientId] = useState(u.oauth && !u.oauth.registered ? (u.oauth.clientId ?? '') : '');
  const [clientSecret, setClientSecret] = useState('');
  const [scope, setScope] = useState(u.oauth?.scope ?? '');
  const form = useFormSubmit(EDIT_FIELDS);
  const stale = form.error?.status === 412;
  const http = u.transport !== 'STDIO';
  const otherHeaders = u.headerNames.filter((h) => h.toLowerCase() !== 'authorization');
  const hasToken = u.headerNames.some((h) => h.toLowerCase() === 'authorization');

  const modeChanged = authMode !== u.authMode;
  // Leaving the static secret drops it (and its headers) in the same change: NONE and OAuth send none of them.
  const dropsSecrets = modeChanged && authMode !== 'STATIC_SECRET' && u.headerNames.length > 0;

  function patchBody(): components['schemas']['UpdateUpstreamDto'] {
    const body: components['schemas']['UpdateUpstreamDto'] = {};
    if (displayName.trim() !== (u.displayName ?? '')) body.displayName = displayName.trim() || null;
    if (http && url.trim() !== (u.url ?? '')) body.url = url.trim();
    if (modeChanged) body.authMode = authMode;
    if (dropsSecrets) {
      if (hasToken) body.bearerToken = null;
      if (otherHeaders.length) body.removeHeaders = otherHeaders;
    } else if (authMode === 'STATIC_SECRET') {
      if (bearerToken) body.bearerToken = bearerToken;
      else if (dropToken) body.bearerToken = null;
      if (removeHeaders.length) body.removeHeaders = removeHeaders;
      if (headerName.trim()) body.headers = { [headerName.trim()]: headerValue };
    }
    if (authMode === 'PER_USER_OAUTH') {
      const oauth: NonNullable<typeof body.oauth> = {};
      const shownId = u.oauth && !u.oauth.registered ? (u.oauth.clientId ?? '') : '';
      if (clientId.trim() !== shownId) oauth.clientId = clientId.trim() || null;
      if (clientSecret) oauth.clientSecret = clientSecret;
      if (scope.trim() !== (u.oauth?.scope ?? '')) oauth.scope = scope.trim() || null;
      if (Object.keys(oauth).length) body.oauth = oauth;
    }
    const { syncIntervalSeconds, callTimeoutMs, outputTokenCap } = settings;
    if (syncIntervalSeconds !== u.syncIntervalSeconds)
      body.syncIntervalSeconds = numberOrUndefined(syncIntervalSeconds);
    if (callTimeoutMs !== u.callTimeoutMs) body.callTimeoutMs = numberOrUndefined(callTimeoutMs);
    if ((outputTokenCap === '' ? null : outputTokenCap) !== u.outputTokenCap)
      body.outputTokenCap = outputTokenCap === '' ? null : numberOrUndefined(outputTokenCap);
    const autoApprove = review === 'org' ? null : review === 'auto';
    if (autoApprove !== u.autoApproveTools) body.autoApproveTools = autoApprove;
    return body;
  }

  const save = form.onSubmit(async () => {
    const body = patchBody();
    const exposureChanged = unprefixed !== u.exposeUnprefixed;
    if (Object.keys(body).length === 0 && !exposureChanged) return onClose();
    // The PATCH carries If-Match; the exposure (its own route, no version) goes first so a name
    // collision (409) refuses the whole form before anything else is saved.
    const path = { orgId: u.orgId, upstreamId: u.id };
    if (exposureChanged)
      await answer(
        adminApi.PUT('/v1/orgs/{orgId}/upstreams/{upstreamId}/exposure', {
          params: { path },
          body: { exposeUnprefixed: unprefixed },
        }),
      );
    if (Object.keys(body).length > 0)
      await answer(
        adminApi.PATCH('/v1/orgs/{orgId}/upstreams/{upstreamId}', {
          params: { path, header: { 'If-Match': `"${u.version}"` } },
          body,
        }),
      );
    onSaved();
  });

  return (
    <FormModal
      title={`Edit the upstream ${u.namespace}`}
      size="lg"
      onClose={onClose}
      onSubmit={save}
      onInput={form.onFormInput}
    >
      <Text size="sm">Transport {transportLabel(u.transport)} (fixed at registration).</Text>
      <TextInput
        label="Display name"
        value={displayName}
        onChange={(e) => setDisplayName(e.currentTarget.value)}
        error={form.at('displayName')}
      />
      {http && (
        <TextInput
          label="URL"
          description="Checked by the outbound rule like at registration"
          value={url}
          onChange={(e) => setUrl(e.currentTarget.value)}
          error={form.at('url')}
          data-testid="upstream-edit-url"
        />
      )}
      <Select
        label="Authentication"
        description={`Now: ${authModeLabel(u.authMode)}. A change reaches every edge with the next call.`}
        data={http ? AUTH_MODES : AUTH_MODES.filter((m) => m.value !== 'PER_USER_OAUTH')}
        value={authMode}
        onChange={(v) => setAuthMode((v ?? u.authMode) as UpstreamDetail['authMode'])}
        allowDeselect={false}
        error={form.at('authMode')}
        data-testid="upstream-edit-auth"
      />
      {dropsSecrets && (
        <Text size="sm" c="var(--tg-warn)" data-testid="upstream-edit-drops-secrets">
          Saving removes the bearer token and headers ({u.headerNames.join(', ')}): {authModeLabel(authMode)} sends none
          of them.
        </Text>
      )}
      {authMode === 'PER_USER_OAUTH' && (
        <>
          <Text size="sm">
            Each user connects their own account under My connections; calls carry their token.
            {u.oauth?.registered && ' Tollgate registered its own client dynamically; set a client id to use yours.'}
            {!u.oauth?.clientId && ' Without a client id, Tollgate registers a client dynamically.'}
          </Text>
          <Group grow align="flex-start">
            <TextInput
              label="OAuth client id"
              description="Empty: register one dynamically"
              value={clientId}
              onChange={(e) => setClientId(e.currentTarget.value)}
              error={form.at('oauth.clientId') ?? form.at('oauth')}
              data-testid="upstream-edit-client-id"
            />
            <SecretInput
              label="OAuth client secret"
              description="Write-only: leave empty to keep the current one"
              value={clientSecret}
              onChange={setClientSecret}
              error={form.at('oauth.clientSecret')}
            />
          </Group>
          <TextInput
            label="OAuth scope"
            description="Optional, e.g. repo read:user"
            value={scope}
            onChange={(e) => setScope(e.currentTarget.value)}
            error={form.at('oauth.scope')}
            data-testid="upstream-edit-scope"
          />
        </>
      )}
      {http && authMode === 'STATIC_SECRET' && (
        <>
          <SecretInput
            label={hasToken && !modeChanged ? 'New bearer token' : 'Bearer token'}
            description={
              hasToken
                ? 'A token is set (not shown). Leave empty to keep it; a new one is used by the next call on every edge.'
                : 'Sent as Authorization: Bearer …; stored encrypted and never shown again'
            }
            value={bearerToken}
            onChange={setBearerToken}
            error={form.at('bearerToken')}
          />
          {hasToken && !modeChanged && (
            <Checkbox
              label="Remove the bearer token"
              checked={dropToken}
              disabled={bearerToken !== ''}
              onChange={(e) => setDropToken(e.currentTarget.checked)}
            />
          )}
          {otherHeaders.length > 0 && (
            <Stack gap={4}>
              <Text size="sm" fw={500}>
                Extra headers (values are write-only)
              </Text>
              {otherHeaders.map((h) => (
                <Checkbox
                  key={h}
                  label={
                    <>
                      Remove <Code>{h}</Code>
                    </>
                  }
                  checked={removeHeaders.includes(h)}
                  onChange={(e) =>
                    setRemoveHeaders(
                      e.currentTarget.checked ? [...removeHeaders, h] : removeHeaders.filter((x) => x !== h),
                    )
                  }
                />
              ))}
            </Stack>
          )}
          <Group grow align="flex-start">
            <TextInput
              label="Set a header"
              description="Name; replaces one of that name"
              value={headerName}
              onChange={(e) => setHeaderName(e.currentTarget.value)}
              error={form.error?.field?.startsWith('headers') ? form.error.message : undefined}
            />
            <SecretInput label="Header value" description="Write-only" value={headerValue} onChange={setHeaderValue} />
          </Group>
        </>
      )}
      <SettingsInputs settings={settings} onChange={setSettings} at={form.at} />
      <Select
        label="Review of new or changed tools"
        data={REVIEW_SETTINGS}
        value={review}
        onChange={(v) => setReview(v ?? 'org')}
        allowDeselect={false}
        error={form.at('autoApproveTools')}
      />
      <Checkbox
        label={`Expose its tools and prompts under their own names (without ${u.namespace}__)`}
        checked={unprefixed}
        onChange={(e) => setUnprefixed(e.currentTarget.checked)}
        error={form.at('exposeUnprefixed')}
        data-testid="upstream-unprefixed"
      />
      {stale ? (
        <StaleAlert testId="upstream-stale">
          This upstream was changed since you opened it (version {u.version} is no longer current), so nothing was
          saved. Reload to see the current settings, then edit again.
        </StaleAlert>
      ) : (
        <FormError error={form.elsewhere} />
      )}
      <FormActions
        submitLabel="Save"
        submitTestId="upstream-edit-save"
        busy={form.busy}
        disabled={stale}
        onCancel={stale ? onSaved : onClose}
        cancelLabel={stale ? 'Reload upstreams' : 'Cancel'}
      />
    </FormModal>
  );
}
