import { Badge, Button, Card, Code, Group, Select, Stack, Switch, Table, Text, TextInput } from '@mantine/core';
import { useMemo, useState } from 'react';
import { adminApi, answer } from '../api/admin-client';
import type { Key, Team, User } from '../api/admin-types';
import { KeySettingsModal } from './key-settings-modal';
import { ConfirmModal } from '../components/confirm-modal';
import { EmptyState, ErrorState, LoadingState } from '../components/page-states';
import { RowAction } from '../components/row-action';
import { formatTimestamp } from '../lib/dates';
import { canManageKeys } from '../lib/roles';
import { useLoad } from '../lib/use-load';
import { useOrgPath, useSession } from '../session';
import { scopeNames } from '../lib/scope-names';
import { DataTable } from '../components/data-table';
import { IssueKeyModal, KeySecret } from './issue-key-modal';

interface KeysData {
  keys: Key[];
  teams: Team[];
  users: User[];
}

// Badges in a crowded table keep their whole label (Mantine truncates it by default).
const BADGE_FULL = { label: { overflow: 'visible' } };

function keyStatus(k: Key): { label: string; color: string } {
  if (k.revokedAt) return { label: 'Revoked', color: 'red.9' };
  if (k.expiresAt && new Date(k.expiresAt) <= new Date()) return { label: 'Expired', color: 'gray.8' };
  return { label: 'Active', color: 'green.9' };
}

/** Rows the table renders at once; the filters find the rest (an org may have thousands of keys). */
const KEY_ROWS_SHOWN = 200;

export function KeysPage() {
  const { me, org } = useSession();
  const orgPath = useOrgPath();
  const data = useLoad<KeysData>(async () => {
    const [keys, teams, users] = await Promise.all([
      answer(adminApi.GET('/v1/orgs/{orgId}/keys', { params: { path: { orgId: org.id } } })),
      answer(adminApi.GET('/v1/orgs/{orgId}/teams', { params: { path: { orgId: org.id } } })),
      answer(adminApi.GET('/v1/orgs/{orgId}/users', { params: { path: { orgId: org.id } } })),
    ]);
    return { keys, teams, users };
  }, [orgPath]);
  const [search, setSearch] = useState('');
  const [showInactive, setShowInactive] = useState(false);
  const [issuing, setIssuing] = useState(false);
  const [revoking, setRevoking] = useState<Key | null>(null);
  const [rotating, setRotating] = useState<Key | null>(null);
  const [editing, setEditing] = useState<Key | null>(null);
  const [tagFilter, setTagFilter] = useState<string | null>(null);
  const mayManage = canManageKeys(me.role);

  const names = useMemo(
    () =>
      data.state === 'ready'
        ? scopeNames({ teams: data.data.teams, users: data.data.users })
        : new Map<string, string>(),
    [data],
  );

  if (data.state === 'loading') return <LoadingState label="Loading keys…" />;
  if (data.state === 'error') return <ErrorState error={data.error} what="keys" onRetry={data.reload} />;

  const needle = search.trim().toLowerCase();
  const allTags = [...new Set(data.data.keys.flatMap((k) => k.tags ?? []))].sort();
  const shown = data.data.keys
    .filter((k) => showInactive || keyStatus(k).label === 'Active')
    .filter((k) => !tagFilter || (k.tags ?? []).includes(tagFilter))
    .filter(
      (k) =>
        !needle ||
        [
          k.name,
          k.prefix,
          ...(k.tags ?? []),
          k.oauthClientName ?? '',
          names.get(k.teamId) ?? '',
          names.get(k.userId) ?? '',
        ].some((s) => s.toLowerCase().includes(needle)),
    );

  return (
    <Stack gap="md">
      <Group justify="space-between">
        <Group>
          <TextInput
            aria-label="Filter keys"
            placeholder="Filter by name, prefix, team or owner"
            value={search}
            onChange={(e) => setSearch(e.currentTarget.value)}
            w={320}
          />
          <Select
            aria-label="Filter by tag"
            placeholder="Any tag"
            data={allTags}
            value={tagFilter}
            onChange={setTagFilter}
            clearable
            w={180}
            data-testid="keys-tag-filter"
          />
          <Switch
            label="Show revoked and expired"
            checked={showInactive}
            onChange={(e) => setShowInactive(e.currentTarget.checked)}
          />
        </Group>
        {mayManage && (
          <Button onClick={() => setIssuing(true)} data-testid="issue-key">
            Issue a key
          </Button>
        )}
      </Group>
      <Card withBorder p={0}>
        {shown.length === 0 ? (
          <EmptyState title={data.data.keys.length === 0 ? 'No keys yet' : 'No key matches'}>
            {data.data.keys.length === 0
              ? 'Issue a virtual key for an agent, or connect a client by OAuth: its key shows here too.'
              : 'Change the filter to see more keys.'}
          </EmptyState>
        ) : (
          <Table.ScrollContainer minWidth={900}>
            <DataTable
              striped
              data-testid="keys-table"
              head={
                <>
                  <Table.Th>Name</Table.Th>
                  <Table.Th>Kind</Table.Th>
                  <Table.Th>Prefix</Table.Th>
                  <Table.Th>Team</Table.Th>
                  <Table.Th>Owner</Table.Th>
                  <Table.Th>Tags</Table.Th>
                  <Table.Th>Disclosure</Table.Th>
                  <Table.Th>Last used</Table.Th>
                  <Table.Th>Expires</Table.Th>
                  <Table.Th>Created</Table.Th>
                  <Table.Th>Status</Table.Th>
                  {mayManage && <Table.Th>Actions</Table.Th>}
                </>
              }
            >
              {shown.slice(0, KEY_ROWS_SHOWN).map((k) => {
                const status = keyStatus(k);
                return (
                  <Table.Tr key={k.id} data-testid="key-row" data-key-id={k.id}>
                    <Table.Td>{k.name}</Table.Td>
                    <Table.Td>
                      {k.kind === 'OAUTH' ? (
                        <Badge variant="outline" color="grape.8" c="var(--tg-strong)" styles={BADGE_FULL}>
                          OAuth{k.oauthClientName ? ` · ${k.oauthClientName}` : ''}
                        </Badge>
                      ) : (
                        <Badge variant="outline" color="indigo.8" c="var(--tg-strong)" styles={BADGE_FULL}>
                          Virtual
                        </Badge>
                      )}
                    </Table.Td>
                    <Table.Td>
                      <Code>{k.prefix}</Code>
                    </Table.Td>
                    <Table.Td>{names.get(k.teamId) ?? k.teamId}</Table.Td>
                    <Table.Td>{names.get(k.userId) ?? k.userId}</Table.Td>
                    <Table.Td data-testid="key-tags-cell">
                      <Group gap={4}>
                        {(k.tags ?? []).map((t) => (
                          <Badge key={t} variant="outline" color="gray.8" c="var(--tg-strong)" tt="none">
                            {t}
                          </Badge>
                        ))}
                      </Group>
                    </Table.Td>
                    <Table.Td>{k.disclosureMode ? k.disclosureMode.toLowerCase() : 'policy'}</Table.Td>
                    <Table.Td>{k.lastUsedAt ? formatTimestamp(k.lastUsedAt, org.timeZone) : 'Never'}</Table.Td>
                    <Table.Td data-testid="key-expires">
                      {k.expiresAt ? formatTimestamp(k.expiresAt, org.timeZone) : 'Never'}
                    </Table.Td>
                    <Table.Td>{formatTimestamp(k.createdAt, org.timeZone)}</Table.Td>
                    <Table.Td>
                      <Badge variant="outline" color={status.color} c="var(--tg-strong)" styles={BADGE_FULL}>
                        {status.label}
                      </Badge>
                    </Table.Td>
                    {mayManage && (
                      <Table.Td>
                        {!k.revokedAt && (
                          <Group gap={2}>
                            <RowAction
                              size="compact-xs"
                              onClick={() => setEditing(k)}
                              aria-label={`Settings of ${k.name}`}
                              data-testid="edit-key"
                            >
                              Settings
                            </RowAction>
                            {k.kind === 'STATIC' && (
                              <RowAction
                                size="compact-xs"
                                onClick={() => setRotating(k)}
                                aria-label={`Rotate ${k.name}`}
                                data-testid="rotate-key"
                              >
                                Rotate
                              </RowAction>
                            )}
                            <RowAction
                              size="compact-xs"
                              danger
                              onClick={() => setRevoking(k)}
                              aria-label={`Revoke ${k.name}`}
                            >
                              Revoke
                            </RowAction>
                          </Group>
                        )}
                      </Table.Td>
                    )}
                  </Table.Tr>
                );
              })}
            </DataTable>
            {shown.length > KEY_ROWS_SHOWN && (
              <Text size="sm" p="sm" data-testid="keys-truncated">
                Showing {KEY_ROWS_SHOWN} of {shown.length} keys: filter by name, prefix, team, owner or tag to find the
                others.
              </Text>
            )}
          </Table.ScrollContainer>
        )}
      </Card>
      {issuing && (
        <IssueKeyModal
          teams={data.data.teams}
          users={data.data.users}
          onClose={() => setIssuing(false)}
          onIssued={data.reload}
        />
      )}
      {editing && <KeySettingsModal keyToEdit={editing} onClose={() => setEditing(null)} onSaved={data.reload} />}
      {rotating && <RotateKeyModal keyToRotate={rotating} onClose={() => setRotating(null)} onRotated={data.reload} />}
      {revoking && (
        <RevokeKeyModal
          keyToRevoke={revoking}
          onClose={() => setRevoking(null)}
          onRevoked={() => {
            setRevoking(null);
            data.reload();
          }}
        />
      )}
    </Stack>
  );
}

function RevokeKeyModal({
  keyToRevoke: k,
  onClose,
  onRevoked,
}: {
  keyToRevoke: Key;
  onClose: () => void;
  onRevoked: () => void;
}) {
  return (
    <ConfirmModal
      title={`Revoke the key ${k.name}?`}
      confirmLabel="Revoke key"
      testId="confirm-revoke"
      onClose={onClose}
      onConfirm={async () => {
        await answer(
          adminApi.POST('/v1/orgs/{orgId}/keys/{keyId}/revoke', { params: { path: { orgId: k.orgId, keyId: k.id } } }),
        );
        onRevoked();
      }}
    >
      <Text size="sm">
        Every edge stops accepting <Code>{k.prefix}…</Code> within a second. Its spend stays in the reports. This cannot
        be undone.
      </Text>
    </ConfirmModal>
  );
}

/** A key's secret, shown this once: Tollgate keeps only its hash. */
function RotateKeyModal({
  keyToRotate: k,
  onClose,
  onRotated,
}: {
  keyToRotate: Key;
  onClose: () => void;
  onRotated: () => void;
}) {
  const [secret, setSecret] = useState<string | null>(null);
  if (secret) {
    return <KeySecret title="Key rotated" secret={secret} onClose={onClose} />;
  }
  return (
    <ConfirmModal
      title={`Rotate the key ${k.name}?`}
      confirmLabel="Rotate key"
      testId="confirm-rotate"
      onClose={onClose}
      onConfirm={async () => {
        const issued = await answer(
          adminApi.POST('/v1/orgs/{orgId}/keys/{keyId}/rotate', { params: { path: { orgId: k.orgId, keyId: k.id } } }),
        );
        setSecret(issued.secret);
        onRotated();
      }}
    >
      <Text size="sm">
        A new secret is issued for the same key (its tags, limits and spend stay). Every edge refuses the old{' '}
        <Code>{k.prefix}…</Code> at once.
      </Text>
    </ConfirmModal>
  );
}
