import { Group, NumberInput, PasswordInput, Select, Text, Textarea, TextInput } from '@mantine/core';
import { Dispatch, ReactNode, SetStateAction, useState } from 'react';
import { adminApi, answer } from '../api/admin-client';
import type { Upstream } from '../api/governance-types';
import { FormActions, FormError } from '../components/form-actions';
import { FormModal } from '../components/form-modal';
import { useFormSubmit } from '../lib/form-submit';
import { useSession } from '../session';

/** GET …/upstreams/:id as the forms read it (the generated UpstreamView). */
export type UpstreamDetail = Upstream;

const TRANSPORTS: { value: Upstream['transport']; label: string }[] = [
  { value: 'STREAMABLE_HTTP', label: 'Streamable HTTP' },
  { value: 'SSE', label: 'SSE (legacy HTTP)' },
  { value: 'STDIO', label: 'stdio (a command on Tollgate’s hosts)' },
];
export const AUTH_MODES: { value: Upstream['authMode']; label: string }[] = [
  { value: 'NONE', label: 'None' },
  { value: 'STATIC_SECRET', label: 'Static secret (bearer token)' },
  { value: 'PER_USER_OAUTH', label: 'Per-user OAuth (each user connects their account)' },
];

export const numberOrUndefined = (v: string | number) => (typeof v === 'number' ? v : undefined);

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
  const { org } = useSession();
  const [namespace, setNamespace] = useState('');
  const [displayName, setDisplayName] = useState('');
  const [transport, setTransport] = useState<Upstream['transport']>('STREAMABLE_HTTP');
  const [url, setUrl] = useState('');
  const [command, setCommand] = useState('');
  const [args, setArgs] = useState('');
  const [authMode, setAuthMode] = useState<Upstream['authMode']>('NONE');
  const [bearerToken, setBearerToken] = useState('');
  const [clientId, setClientId] = useState('');
  const [clientSecret, setClientSecret] = useState('');
  const [scope, setScope] = useState('');
  const [settings, setSettings] = useState<UpstreamSettings>({
    syncIntervalSeconds: 3600,
    callTimeoutMs: 30_000,
    outputTokenCap: '',
  });
  const form = useFormSubmit(REGISTER_FIELDS);
  const stdio = transport === 'STDIO';

  const register = form.onSubmit(async () => {
    const oauth = {
      ...(clientId ? { clientId } : {}),
      ...(clientSecret ? { clientSecret } : {}),
      ...(scope ? { scope } : {}),
    };
    const created = await answer(
      adminApi.POST('/v1/orgs/{orgId}/upstreams', {
        params: { path: { orgId: org.id } },
        body: {
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
        },
      }),
    );
    onRegistered(created);
  });

  return (
    <FormModal title="Register an upstream" size="lg" onClose={onClose} onSubmit={register} onInput={form.onFormInput}>
      <Group grow align="flex-start">
        <TextInput
          label="Namespace"
          description="Agents see its tools as namespace__tool"
          required
          value={namespace}
          onChange={(e) => setNamespace(e.currentTarget.value)}
          error={form.at('namespace')}
          data-testid="upstream-namespace"
        />
        <TextInput
          label="Display name"
          description="Optional"
          value={displayName}
          onChange={(e) => setDisplayName(e.currentTarget.value)}
          error={form.at('displayName')}
        />
      </Group>
      <Select
        label="Transport"
        data={TRANSPORTS}
        value={transport}
        onChange={(v) => setTransport(TRANSPORTS.find((t) => t.value === v)?.value ?? 'STREAMABLE_HTTP')}
        allowDeselect={false}
        error={form.at('transport')}
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
            error={form.at('command')}
          />
          <Textarea
            label="Arguments"
            description="One per line"
            autosize
            minRows={2}
            value={args}
            onChange={(e) => setArgs(e.currentTarget.value)}
            error={form.at('args')}
          />
        </>
      ) : (
        <TextInput
          label="URL"
          description="The MCP endpoint, e.g. https://mcp.example.com/mcp"
          required
          value={url}
          onChange={(e) => setUrl(e.currentTarget.value)}
          error={form.at('url')}
          data-testid="upstream-url"
        />
      )}
      <Select
        label="Authentication"
        data={stdio ? AUTH_MODES.filter((m) => m.value !== 'PER_USER_OAUTH') : AUTH_MODES}
        value={authMode}
        onChange={(v) => setAuthMode(AUTH_MODES.find((m) => m.value === v)?.value ?? 'NONE')}
        allowDeselect={false}
        error={form.at('authMode')}
        data-testid="upstream-auth"
      />
      {authMode === 'STATIC_SECRET' && (
        <SecretInput
          label="Bearer token"
          description="Sent as Authorization: Bearer …; stored encrypted and never shown again"
          value={bearerToken}
          onChange={setBearerToken}
          error={form.at('bearerToken')}
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
              error={form.at('oauth.clientId')}
            />
            <SecretInput
              label="OAuth client secret"
              description="Optional; never shown again"
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
          />
        </>
      )}
      <SettingsInputs settings={settings} onChange={setSettings} at={form.at} />
      <FormError error={form.elsewhere} />
      <FormActions
        submitLabel="Register upstream"
        submitTestId="upstream-register-submit"
        busy={form.busy}
        onCancel={onClose}
      />
    </FormModal>
  );
}

/** The sync, time-out and output-cap numbers both forms edit, as typed (an empty input is ''). */
export interface UpstreamSettings {
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

export function SettingsInputs({
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
export function SecretInput(props: {
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
