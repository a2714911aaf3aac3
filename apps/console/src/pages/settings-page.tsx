import { Badge, Button, Card, Code, Group, Select, Stack, Switch, Table, Text, TextInput, Title } from '@mantine/core';
import { useMemo, useState } from 'react';
import { adminApi, answer } from '../api/admin-client';
import type { components } from '../api/admin-api.gen';
import type { Org, Team, User } from '../api/admin-types';
import { ConfirmModal } from '../components/confirm-modal';
import { SecretShownOnce } from '../components/secret-shown-once';
import { DataTable } from '../components/data-table';
import { FormActions, FormError } from '../components/form-actions';
import { FormModal } from '../components/form-modal';
import { EmptyState, ErrorState, LoadingState } from '../components/page-states';
import { RowAction } from '../components/row-action';
import { formatTimestamp } from '../lib/dates';
import { useFormSubmit } from '../lib/form-submit';
import { roleLabel } from '../lib/labels';
import { canManageOrg } from '../lib/roles';
import { useLoad } from '../lib/use-load';
import { useSession } from '../session';
import { SsoSettings } from './sso-settings';

type AdminToken = components['schemas']['AdminTokenView'];

/** Every IANA zone and ISO 4217 code this browser knows (the API checks the same lists). */
const supported = (kind: 'timeZone' | 'currency'): string[] =>
  (Intl as unknown as { supportedValuesOf?: (k: string) => string[] }).supportedValuesOf?.(kind) ?? [];

/** The organisation's settings (name, time zone, currency, tool review) and its admin tokens. */
export function SettingsPage() {
  const { me, org: signedInOrg } = useSession();
  const mayManage = canManageOrg(me.role);
  const org = useLoad(
    () => answer(adminApi.GET('/v1/orgs/{orgId}', { params: { path: { orgId: signedInOrg.id } } })),
    [signedInOrg.id],
  );
  // Both the SSO form (the team new people join) and the admin tokens name teams: asked once, here.
  const teams = useLoad(
    () =>
      mayManage
        ? answer(adminApi.GET('/v1/orgs/{orgId}/teams', { params: { path: { orgId: signedInOrg.id } } }))
        : Promise.resolve([] as Team[]),
    [signedInOrg.id, mayManage],
  );
  const teamList = teams.state === 'ready' ? teams.data : [];
  return (
    <Stack gap="xl">
      {org.state === 'loading' && <LoadingState label="Loading the organisation…" />}
      {org.state === 'error' && <ErrorState error={org.error} what="the organisation" onRetry={org.reload} />}
      {org.state === 'ready' && (
        <OrgForm key={JSON.stringify(org.data)} org={org.data} mayManage={mayManage} onSaved={org.reload} />
      )}
      <SsoSettings mayManage={mayManage} teams={teamList} />
      {mayManage && <AdminTokens teams={teamList} />}
    </Stack>
  );
}

function OrgForm({ org, mayManage, onSaved }: { org: Org; mayManage: boolean; onSaved: () => void }) {
  const [name, setName] = useState(org.name);
  const [timeZone, setTimeZone] = useState(org.timeZone);
  const [currency, setCurrency] = useState(org.currency);
  const [autoApprove, setAutoApprove] = useState(org.autoApproveTools);
  const form = useFormSubmit(['name', 'timeZone', 'currency', 'autoApproveTools']);
  const [saved, setSaved] = useState(false);
  const zones = useMemo(() => supported('timeZone'), []);
  const currencies = useMemo(() => supported('currency'), []);
  const changed: components['schemas']['UpdateOrgDto'] = {
    ...(name.trim() !== org.name ? { name: name.trim() } : {}),
    ...(timeZone !== org.timeZone ? { timeZone } : {}),
    ...(currency !== org.currency ? { currency } : {}),
    ...(autoApprove !== org.autoApproveTools ? { autoApproveTools: autoApprove } : {}),
  };

  const save = form.onSubmit(async () => {
    await answer(adminApi.PATCH('/v1/orgs/{orgId}', { params: { path: { orgId: org.id } }, body: changed }));
    setSaved(true);
    // The whole console shows times and money in these: sign-in data is read again.
    if (changed.timeZone || changed.currency || changed.name) window.location.reload();
    else onSaved();
  });

  return (
    <Card withBorder component="section" aria-labelledby="org-settings-title">
      <Title order={2} size="h4" id="org-settings-title" mb="sm">
        Organisation
      </Title>
      <form onSubmit={save} noValidate>
        <Stack maw={560}>
          <TextInput
            label="Name"
            value={name}
            onChange={(e) => setName(e.currentTarget.value)}
            readOnly={!mayManage}
            error={form.at('name')}
            data-testid="org-name"
          />
          <Select
            label="Time zone"
            description="Report days, budget periods and every time in the console follow it"
            data={zones.includes(timeZone) ? zones : [timeZone, ...zones]}
            value={timeZone}
            onChange={(v) => v && setTimeZone(v)}
            searchable
            allowDeselect={false}
            readOnly={!mayManage}
            error={form.at('timeZone')}
            data-testid="org-time-zone"
          />
          <Select
            label="Currency"
            description="Names the unit of every amount (nothing is converted)"
            data={currencies.includes(currency) ? currencies : [currency, ...currencies]}
            value={currency}
            onChange={(v) => v && setCurrency(v)}
            searchable
            allowDeselect={false}
            readOnly={!mayManage}
            error={form.at('currency')}
            data-testid="org-currency"
          />
          <Switch
            label="Serve new or changed tools at once (off: hold them for review)"
            checked={autoApprove}
            onChange={(e) => setAutoApprove(e.currentTarget.checked)}
            disabled={!mayManage}
            data-testid="org-auto-approve"
          />
          <FormError error={form.elsewhere} />
          {mayManage && (
            <Group>
              <Button
                type="submit"
                loading={form.busy}
                disabled={Object.keys(changed).length === 0}
                data-testid="org-save"
              >
                Save settings
              </Button>
              {saved && (
                <Text size="sm" role="status">
                  Saved.
                </Text>
              )}
            </Group>
          )}
        </Stack>
      </form>
    </Card>
  );
}

function AdminTokens({ teams }: { teams: Team[] }) {
  const { org } = useSession();
  const [showRevoked, setShowRevoked] = useState(false);
  const data = useLoad(async () => {
    const [tokens, users] = await Promise.all([
      answer(
        adminApi.GET('/v1/admin-tokens', {
          params: { query: { orgId: org.id, ...(showRevoked ? { includeRevoked: 'true' } : {}) } },
        }),
      ),
      answer(adminApi.GET('/v1/orgs/{orgId}/users', { params: { path: { orgId: org.id } } })),
    ]);
    return { tokens, users };
  }, [org.id, showRevoked]);
  const [issuing, setIssuing] = useState(false);
  const [revoking, setRevoking] = useState<AdminToken | null>(null);

  return (
    <Card withBorder component="section" aria-labelledby="admin-tokens-title" p={0}>
      <Group justify="space-between" p="md">
        <Title order={2} size="h4" id="admin-tokens-title">
          Admin tokens
        </Title>
        <Group>
          <Switch
            label="Show revoked"
            checked={showRevoked}
            onChange={(e) => setShowRevoked(e.currentTarget.checked)}
          />
          <Button size="xs" onClick={() => setIssuing(true)} data-testid="issue-admin-token">
            Issue a token
          </Button>
        </Group>
      </Group>
      {data.state === 'loading' && <LoadingState label="Loading admin tokens…" />}
      {data.state === 'error' && <ErrorState error={data.error} what="admin tokens" onRetry={data.reload} />}
      {data.state === 'ready' &&
        (data.data.tokens.length === 0 ? (
          <EmptyState title="No admin token">
            Tokens are for automation (CI, scripts); people sign in with SSO.
          </EmptyState>
        ) : (
          <DataTable
            data-testid="admin-tokens-table"
            minWidth={760}
            label="Admin tokens"
            head={
              <>
                <Table.Th>Name</Table.Th>
                <Table.Th>Role</Table.Th>
                <Table.Th>Holder</Table.Th>
                <Table.Th>Last used</Table.Th>
                <Table.Th>Expires</Table.Th>
                <Table.Th>Actions</Table.Th>
              </>
            }
          >
            {data.data.tokens.map((t) => (
              <Table.Tr key={t.id} data-testid="admin-token-row" data-name={t.name}>
                <Table.Td>
                  <Text size="sm" fw={600}>
                    {t.name}
                  </Text>
                  <Code>{t.prefix}…</Code>
                </Table.Td>
                <Table.Td>
                  {roleLabel(t.role)}
                  {t.teamId && ` of ${teams.find((x) => x.id === t.teamId)?.name ?? t.teamId}`}
                </Table.Td>
                <Table.Td>{t.owner ? (t.owner.name ?? t.owner.email) : (t.ownerLabel ?? '—')}</Table.Td>
                <Table.Td>{t.lastUsedAt ? formatTimestamp(t.lastUsedAt, org.timeZone) : 'never'}</Table.Td>
                <Table.Td>{t.expiresAt ? formatTimestamp(t.expiresAt, org.timeZone) : 'never'}</Table.Td>
                <Table.Td>
                  {t.revokedAt ? (
                    <Badge variant="outline" color="gray.8" c="var(--tg-strong)">
                      revoked
                    </Badge>
                  ) : (
                    <RowAction danger onClick={() => setRevoking(t)} aria-label={`Revoke the token ${t.name}`}>
                      Revoke
                    </RowAction>
                  )}
                </Table.Td>
              </Table.Tr>
            ))}
          </DataTable>
        ))}
      {issuing && data.state === 'ready' && (
        <IssueTokenModal
          teams={teams}
          users={data.data.users}
          onClose={() => setIssuing(false)}
          onIssued={data.reload}
        />
      )}
      {revoking && (
        <ConfirmModal
          title={`Revoke the token ${revoking.name}?`}
          confirmLabel="Revoke token"
          testId="confirm-revoke-token"
          onClose={() => setRevoking(null)}
          onConfirm={async () => {
            await answer(adminApi.DELETE('/v1/admin-tokens/{tokenId}', { params: { path: { tokenId: revoking.id } } }));
            setRevoking(null);
            data.reload();
          }}
        >
          <Text size="sm">Whatever uses it is refused from its next request. The audit log keeps what it did.</Text>
        </ConfirmModal>
      )}
    </Card>
  );
}

const TOKEN_ROLES = ['ORG_ADMIN', 'FINANCE', 'TEAM_ADMIN', 'MEMBER'] as const satisfies readonly AdminToken['role'][];

function IssueTokenModal({
  teams,
  users,
  onClose,
  onIssued,
}: {
  teams: Team[];
  users: User[];
  onClose: () => void;
  onIssued: () => void;
}) {
  const { org } = useSession();
  const [name, setName] = useState('');
  const [role, setRole] = useState<(typeof TOKEN_ROLES)[number]>('FINANCE');
  const [teamId, setTeamId] = useState<string | null>(null);
  const [userId, setUserId] = useState<string | null>(null);
  const form = useFormSubmit(['name', 'role', 'teamId', 'userId']);
  const [secret, setSecret] = useState<string | null>(null);
  const needsTeam = role === 'TEAM_ADMIN' || role === 'MEMBER';

  const submit = form.onSubmit(async () => {
    const issued = await answer(
      adminApi.POST('/v1/admin-tokens', {
        body: {
          orgId: org.id,
          name: name.trim(),
          role,
          ...(needsTeam && teamId ? { teamId } : {}),
          ...(userId ? { userId } : {}),
        },
      }),
    );
    setSecret(issued.secret);
    onIssued();
  });

  if (secret) {
    return (
      <SecretShownOnce
        title="Token issued"
        warning="Copy the token now"
        secret={secret}
        onClose={onClose}
        testId="admin-token-secret"
      >
        This is the only time it is shown. Tollgate keeps only a hash of it.
      </SecretShownOnce>
    );
  }
  return (
    <FormModal title="Issue an admin token" onClose={onClose} onSubmit={submit}>
      <TextInput
        label="Name"
        description="What uses it, e.g. ci-pipeline"
        value={name}
        onChange={(e) => setName(e.currentTarget.value)}
        error={form.at('name')}
        data-testid="admin-token-name"
      />
      <Select
        label="Role"
        data={TOKEN_ROLES.map((r) => ({ value: r, label: roleLabel(r) }))}
        value={role}
        onChange={(v) => {
          const chosen = TOKEN_ROLES.find((r) => r === v);
          if (chosen) setRole(chosen);
        }}
        allowDeselect={false}
        error={form.at('role')}
        data-testid="admin-token-role"
      />
      {needsTeam && (
        <Select
          label="Team"
          data={teams.map((t) => ({ value: t.id, label: t.name }))}
          value={teamId}
          onChange={setTeamId}
          error={form.at('teamId')}
          data-testid="admin-token-team"
        />
      )}
      <Select
        label="Person it acts for"
        description={role === 'MEMBER' ? 'Required for a member' : 'Optional'}
        data={users.map((u) => ({ value: u.id, label: u.name ? `${u.name} (${u.email})` : u.email }))}
        value={userId}
        onChange={setUserId}
        searchable
        clearable
        error={form.at('userId')}
        data-testid="admin-token-user"
      />
      <FormError error={form.elsewhere} />
      <FormActions
        submitLabel="Issue token"
        submitTestId="admin-token-submit"
        busy={form.busy}
        disabled={!name.trim() || (needsTeam && !teamId)}
        onCancel={onClose}
      />
    </FormModal>
  );
}
