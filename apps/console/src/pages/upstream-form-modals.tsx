import {
  Checkbox,
  Code,
  Group,
  NumberInput,
  PasswordInput,
  Select,
  Stack,
  Text,
  Textarea,
  TextInput,
} from '@mantine/core';
import { Dispatch, FormEvent, ReactNode, SetStateAction, useState } from 'react';
import { api, send, toApiError } from '../api/admin-client';
import type { Upstream } from '../api/governance-types';
import { FormActions, FormError } from '../components/form-actions';
import { StaleAlert } from '../components/stale-alert';
import { FormModal } from '../components/form-modal';
import { useFieldErrors } from '../lib/field-errors';
import { useOrgPath } from '../session';

/** The fields of GET …/upstreams the forms read beyond the shared Upstream type. */
export interface UpstreamDetail extends Upstream {
  args: string[];
  headerNames: string[];
  authMode: 'NONE' | 'STATIC_SECRET' | 'PER_USER_OAUTH';
  callTimeoutMs: number;
  outputTokenCap: number | null;
  exposeUnprefixed: boolean;
}

const TRANSPORTS = [
  { value: 'STREAMABLE_HTTP', label: 'Streamable HTTP' },
  { value: 'SSE', label: 'SSE (legacy HTTP)' },
  { value: 'STDIO', label: 'stdio (a command on Tollgate’s hosts)' },
];
const AUTH_MODES = [
  { value: 'NONE', label: 'None' },
  { value: 'STATIC_SECRET', label: 'Static secret (bearer token)' },
  { value: 'PER_USER_OAUTH', label: 'Per-user OAuth (each user connects their account)' },
];

const numberOrUndefined = (v: string | number) => (typeof v === 'number' ? v : undefined);

const REGISTER_FIELDS = [
  'namespace',
  'displayName',
  'transport',
  'url',
  'command',
  'args',
  'authMode',
  'bearerToken',
  'oauth.clientId',
  'oauth.clientSecret',
  'oauth.scope',
  'syncIntervalSeconds',
  'callTimeoutMs',
  'outputTokenCap',
];

export function RegisterUpstreamModal({
  onClose,
  onRegistered,
}: {
  onClose: () => void;
  onRegistered: (u: UpstreamDetail) => void;
}) {
  const orgPath = useOrgPath();
  const [namespace, setNamespace] = useState('');
  const [displayName, setDisplayName] = useState('');
  const [transport, setTransport] = useState('STREAMABLE_HTTP');
  const [url, setUrl] = useState('');
  const [command, setCommand] = useState('');
  const [args, setArgs] = useState('');
  const [authMode, setAuthMode] = useState('NONE');
  const [bearerToken, setBearerToken] = useState('');
  const [clientId, setClientId] = useState('');
  const [clientSecret, setClientSecret] = useState('');
  const [scope, setScope] = useState('');
  const [settings, setSettings] = useState<UpstreamSettings>({
    syncIntervalSeconds: 3600,
    callTimeoutMs: 30_000,
    outputTokenCap: '',
  });
  const [busy, setBusy] = useState(false);
  const errors = useFieldErrors(REGISTER_FIELDS);
  const stdio = transport === 'STDIO';

  async function register(e: FormEvent) {
    e.preventDefault();
    setBusy(true);
    errors.setError(null);
    const oauth = {
      ...(clientId ? { clientId } : {}),
      ...(clientSecret ? { clientSecret } : {}),
      ...(scope ? { scope } : {}),
    };
    try {
      const created = await api<UpstreamDetail>('POST', `${orgPath}/upstreams`, {
        namespace: namespace.trim(),
        ...(displayName.trim() ? { displayName: displayName.trim() } : {}),
        transport,
        ...(stdio
          ? { command: command.trim(), args: args.split('\n').filter((a) => a.trim() !== '') }
          : { url: url.trim() }),
        authMode,
        ...(authMode === 'STATIC_SECRET' && bearerToken ? { bearerToken } : {}),
        ...(authMode === 'PER_USER_OAUTH' && Object.keys(oauth).length ? { oauth } : {}),
        syncIntervalSeconds: numberOrUndefined(settings.syncIntervalSeconds),
        callTimeoutMs: numberOrUndefined(settings.callTimeoutMs),
        outputTokenCap: numberOrUndefined(settings.outputTokenCap),
      });
      onRegistered(created);
    } catch (err) {
      errors.setError(toApiError(err));
      setBusy(false);
    }
  }

  return (
    <FormModal
      title="Register an upstream"
      size="lg"
      onClose={onClose}
      onSubmit={register}
      onInput={errors.onFormInput}
    >
      <Group grow align="flex-start">
        <TextInput
          label="Namespace"
          description="Agents see its tools as namespace__tool"
          required
          value={namespace}
          onChange={(e) => setNamespace(e.currentTarget.value)}
          error={errors.at('namespace')}
          data-testid="upstream-namespace"
        />
        <TextInput
          label="Display name"
          description="Optional"
          value={displayName}
          onChange={(e) => setDisplayName(e.currentTarget.value)}
          error={errors.at('displayName')}
        />
      </Group>
      <Select
        label="Transport"
        data={TRANSPORTS}
        value={transport}
        onChange={(v) => setTransport(v ?? 'STREAMABLE_HTTP')}
        allowDeselect={false}
        error={errors.at('transport')}
        data-testid="upstream-transport"
      />
      {stdio ? (
        <>
          <TextInput
            label="Command"
            description="Runs on Tollgate’s hosts: platform admins only unless the deployment allows it"
            required
            value={command}
            onChange={(e) => setCommand(e.currentTarget.value)}
            error={errors.at('command')}
          />
          <Textarea
            label="Arguments"
            description="One per line"
            autosize
            minRows={2}
            value={args}
            onChange={(e) => setArgs(e.currentTarget.value)}
            error={errors.at('args')}
          />
        </>
      ) : (
        <TextInput
          label="URL"
          description="The MCP endpoint, e.g. https://mcp.example.com/mcp"
          required
          value={url}
          onChange={(e) => setUrl(e.currentTarget.value)}
          error={errors.at('url')}
          data-testid="upstream-url"
        />
      )}
      <Select
        label="Authentication"
        data={stdio ? AUTH_MODES.filter((m) => m.value !== 'PER_USER_OAUTH') : AUTH_MODES}
        value={authMode}
        onChange={(v) => setAuthMode(v ?? 'NONE')}
        allowDeselect={false}
        error={errors.at('authMode')}
        data-testid="upstream-auth"
      />
      {authMode === 'STATIC_SECRET' && (
        <SecretInput
          label="Bearer token"
          description="Sent as Authorization: Bearer …; stored encrypted and never shown again"
          value={bearerToken}
          onChange={setBearerToken}
          error={errors.at('bearerToken')}
        />
      )}
      {authMode === 'PER_USER_OAUTH' && (
        <>
          <Text size="sm">
            Each user connects their own account under My connections; calls carry their token. Without a client id,
            Tollgate registers a client dynamically.
          </Text>
          <Group grow align="flex-start">
            <TextInput
              label="OAuth client id"
              description="Optional"
              value={clientId}
              onChange={(e) => setClientId(e.currentTarget.value)}
              error={errors.at('oauth.clientId')}
            />
            <SecretInput
              label="OAuth client secret"
              description="Optional; never shown again"
              value={clientSecret}
              onChange={setClientSecret}
              error={errors.at('oauth.clientSecret')}
            />
          </Group>
          <TextInput
            label="OAuth scope"
            description="Optional, e.g. repo read:user"
            value={scope}
            onChange={(e) => setScope(e.currentTarget.value)}
            error={errors.at('oauth.scope')}
          />
        </>
      )}
      <SettingsInputs settings={settings} onChange={setSettings} at={errors.at} />
      <FormError error={errors.elsewhere} />
      <FormActions
        submitLabel="Register upstream"
        submitTestId="upstream-register-submit"
        busy={busy}
        onCancel={onClose}
      />
    </FormModal>
  );
}

const EDIT_FIELDS = [
  'displayName',
  'url',
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
  const orgPath = useOrgPath();
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
  const [busy, setBusy] = useState(false);
  const errors = useFieldErrors(EDIT_FIELDS);
  const stale = errors.error?.status === 412;
  const http = u.transport !== 'STDIO';
  const otherHeaders = u.headerNames.filter((h) => h.toLowerCase() !== 'authorization');
  const hasToken = u.headerNames.some((h) => h.toLowerCase() === 'authorization');

  function patchBody(): Record<string, unknown> {
    const body: Record<string, unknown> = {};
    if (displayName.trim() !== (u.displayName ?? '')) body.displayName = displayName.trim() || null;
    if (http && url.trim() !== (u.url ?? '')) body.url = url.trim();
    if (bearerToken) body.bearerToken = bearerToken;
    else if (dropToken) body.bearerToken = null;
    if (removeHeaders.length) body.removeHeaders = removeHeaders;
    if (headerName.trim()) body.headers = { [headerName.trim()]: headerValue };
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

  async function save(e: FormEvent) {
    e.preventDefault();
    const body = patchBody();
    const exposureChanged = unprefixed !== u.exposeUnprefixed;
    if (Object.keys(body).length === 0 && !exposureChanged) return onClose();
    setBusy(true);
    errors.setError(null);
    try {
      // The PATCH carries If-Match; the exposure (its own route, no version) goes first so a name
      // collision (409) refuses the whole form before anything else is saved.
      if (exposureChanged) await api('PUT', `${orgPath}/upstreams/${u.id}/exposure`, { exposeUnprefixed: unprefixed });
      if (Object.keys(body).length > 0)
        await send('PATCH', `${orgPath}/upstreams/${u.id}`, body, { 'If-Match': `"${u.version}"` });
      onSaved();
    } catch (err) {
      errors.setError(toApiError(err));
      setBusy(false);
    }
  }

  return (
    <FormModal
      title={`Edit the upstream ${u.namespace}`}
      size="lg"
      onClose={onClose}
      onSubmit={save}
      onInput={errors.onFormInput}
    >
      <Text size="sm">
        Transport {u.transport}, authentication {u.authMode.toLowerCase().replace(/_/g, ' ')} (fixed at registration).
      </Text>
      <TextInput
        label="Display name"
        value={displayName}
        onChange={(e) => setDisplayName(e.currentTarget.value)}
        error={errors.at('displayName')}
      />
      {http && (
        <TextInput
          label="URL"
          description="Checked by the outbound rule like at registration"
          value={url}
          onChange={(e) => setUrl(e.currentTarget.value)}
          error={errors.at('url')}
          data-testid="upstream-edit-url"
        />
      )}
      {http && u.authMode !== 'PER_USER_OAUTH' && (
        <>
          <SecretInput
            label={hasToken ? 'New bearer token' : 'Bearer token'}
            description={
              hasToken
                ? 'A token is set (not shown). Leave empty to keep it; a new one is used by the next call on every edge.'
                : 'Sent as Authorization: Bearer …; stored encrypted and never shown again'
            }
            value={bearerToken}
            onChange={setBearerToken}
            error={errors.at('bearerToken')}
          />
          {hasToken && (
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
              error={errors.error?.field?.startsWith('headers') ? errors.error.message : undefined}
            />
            <SecretInput label="Header value" description="Write-only" value={headerValue} onChange={setHeaderValue} />
          </Group>
        </>
      )}
      <SettingsInputs settings={settings} onChange={setSettings} at={errors.at} />
      <Select
        label="Review of new or changed tools"
        data={REVIEW_SETTINGS}
        value={review}
        onChange={(v) => setReview(v ?? 'org')}
        allowDeselect={false}
        error={errors.at('autoApproveTools')}
      />
      <Checkbox
        label={`Expose its tools and prompts under their own names (without ${u.namespace}__)`}
        checked={unprefixed}
        onChange={(e) => setUnprefixed(e.currentTarget.checked)}
        error={errors.at('exposeUnprefixed')}
        data-testid="upstream-unprefixed"
      />
      {stale ? (
        <StaleAlert testId="upstream-stale">
          This upstream was changed since you opened it (version {u.version} is no longer current), so nothing was
          saved. Reload to see the current settings, then edit again.
        </StaleAlert>
      ) : (
        <FormError error={errors.elsewhere} />
      )}
      <FormActions
        submitLabel="Save"
        submitTestId="upstream-edit-save"
        busy={busy}
        disabled={stale}
        onCancel={stale ? onSaved : onClose}
        cancelLabel={stale ? 'Reload upstreams' : 'Cancel'}
      />
    </FormModal>
  );
}

/** The sync, time-out and output-cap numbers both forms edit, as typed (an empty input is ''). */
interface UpstreamSettings {
  syncIntervalSeconds: string | number;
  callTimeoutMs: string | number;
  outputTokenCap: string | number;
}

const SETTING_INPUTS: {
  field: keyof UpstreamSettings;
  label: string;
  description?: string;
  min: number;
  max: number;
}[] = [
  { field: 'syncIntervalSeconds', label: 'Sync every (seconds)', min: 60, max: 604_800 },
  { field: 'callTimeoutMs', label: 'Call time-out (ms)', min: 100, max: 600_000 },
  { field: 'outputTokenCap', label: 'Output token cap', description: 'Empty: the policy’s', min: 1, max: 1_000_000 },
];

function SettingsInputs({
  settings,
  onChange,
  at,
}: {
  settings: UpstreamSettings;
  onChange: Dispatch<SetStateAction<UpstreamSettings>>;
  at: (field: string) => string | undefined;
}) {
  return (
    <Group grow align="flex-start">
      {SETTING_INPUTS.map(({ field, label, description, min, max }) => (
        <NumberInput
          key={field}
          label={label}
          description={description}
          min={min}
          max={max}
          allowDecimal={false}
          value={settings[field]}
          onChange={(v) => onChange((prev) => ({ ...prev, [field]: v }))}
          error={at(field)}
        />
      ))}
    </Group>
  );
}

/** Write-only: typed, sent once, never filled back in from the API. */
function SecretInput(props: {
  label: string;
  description: ReactNode;
  value: string;
  onChange: (v: string) => void;
  error?: string;
}) {
  return (
    <PasswordInput
      label={props.label}
      description={props.description}
      value={props.value}
      onChange={(e) => props.onChange(e.currentTarget.value)}
      error={props.error}
      autoComplete="new-password"
    />
  );
}
