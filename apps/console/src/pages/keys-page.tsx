import { Badge, Button, Card, Code, Group, Select, Stack, Switch, Table, Text, TextInput } from '@mantine/core';
import { useDebouncedValue } from '@mantine/hooks';
import { useEffect, useMemo, useState } from 'react';
import { adminApi, answer } from '../api/admin-client';
import type { Key, KeyPage } from '../api/admin-types';
import { KeySettingsModal } from './key-settings-modal';
import { ConfirmModal } from '../components/confirm-modal';
import { EmptyState, ErrorState, LoadingState } from '../components/page-states';
import { RowAction } from '../components/row-action';
import { formatTimestamp } from '../lib/dates';
import { canManageKeys } from '../lib/roles';
import { useLoad } from '../lib/use-load';
import { useSession } from '../session';
import { DataTable } from '../components/data-table';
import { SortableTh, type TableSort, useTableSort } from '../components/sortable-th';
import { IssueKeyModal, KeySecret } from './issue-key-modal';

// Badges in a crowded table keep their whole label (Mantine truncates it by default).
const BADGE_FULL = { label: { overflow: 'visible' } };

function keyStatus(k: Key): { label: string; color: string } {
  if (k.revokedAt) return { label: 'Revoked', color: 'red.9' };
  if (k.expiresAt && new Date(k.expiresAt) <= new Date()) return { label: 'Expired', color: 'gray.8' };
  return { label: 'Active', color: 'green.9' };
}

/** Rows a page shows; the API filters and pages (an org may have thousands of keys). */
const KEYS_PER_PAGE = 100;

export function KeysPage() {
  const { me, org } = useSession();
  const [search, setSearch] = useState('');
  // The API searches once typing pauses, not per keystroke.
  const [query] = useDebouncedValue(search.trim(), 300);
  const [showInactive, setShowInactive] = useState(false);
  const [tagFilter, setTagFilter] = useState<string | null>(null);
  // The page chosen, for the filters it was chosen under: new filters start at their first page.
  const [paged, setPaged] = useState({ filters: '', offset: 0 });
  const [issuing, setIssuing] = useState(false);
  const [revoking, setRevoking] = useState<Key | null>(null);
  const [rotating, setRotating] = useState<Key | null>(null);
  const [editing, setEditing] = useState<Key | null>(null);
  const mayManage = canManageKeys(me.role);
  // The API sorts the whole list before paging (`sort`), so page 2 continues page 1's order.
  const sorting = useTableSort();
  const sortParam = sorting.sort ? `${sorting.sort.column}:${sorting.sort.direction}` : null;
  const filters = JSON.stringify([query, tagFilter, showInactive, sortParam]);
  const offset = paged.filters === filters ? paged.offset : 0;

  const data = useLoad<KeyPage>(
    () =>
      answer(
        adminApi.GET('/v1/orgs/{orgId}/keys/page', {
          params: {
            path: { orgId: org.id },
            query: {
              ...(query ? { search: query } : {}),
              ...(tagFilter ? { tag: tagFilter } : {}),
              ...(sortParam ? { sort: sortParam } : {}),
              inactive: showInactive,
              limit: KEYS_PER_PAGE,
              offset,
            },
          },
        }),
      ),
    [org.id, filters, offset],
  );
  // The tag choices of the last answer stay while the next page loads.
  const [allTags, setAllTags] = useState<string[]>([]);
  useEffect(() => {
    if (data.state === 'ready') setAllTags(data.data.tags);
  }, [data]);
  const names = useMemo(
    () => new Map(data.state === 'ready' ? data.data.names.map((n) => [n.id, n.name] as const) : []),
    [data],
  );
  const filtered = Boolean(query || tagFilter);

  return (
    <Stack gap="md">
      <Group justify="space-between">
        <Group>
          <TextInput
            aria-label="Filter keys"
            placeholder="Filter by name, prefix, tag, team or owner"
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
      {data.state === 'loading' ? (
        <LoadingState label="Loading keys…" />
      ) : data.state === 'error' ? (
        <ErrorState error={data.error} what="keys" onRetry={data.reload} />
      ) : (
        <KeysTable
          page={data.data}
          names={names}
          filtered={filtered}
          sorting={sorting}
          mayManage={mayManage}
          timeZone={org.timeZone}
          onPage={(next) => setPaged({ filters, offset: next })}
          onEdit={setEditing}
          onRotate={setRotating}
          onRevoke={setRevoking}
        />
      )}
      {issuing && <IssueKeyLoader onClose={() => setIssuing(false)} onIssued={data.reload} />}
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

/** The issue form, once the teams and people it offers are loaded (the list itself does not need them). */
function IssueKeyLoader({ onClose, onIssued }: { onClose: () => void; onIssued: () => void }) {
  const { org } = useSession();
  const choices = useLoad(async () => {
    const [teams, users] = await Promise.all([
      answer(adminApi.GET('/v1/orgs/{orgId}/teams', { params: { path: { orgId: org.id } } })),
      answer(adminApi.GET('/v1/orgs/{orgId}/users', { params: { path: { orgId: org.id } } })),
    ]);
    return { teams, users };
  }, [org.id]);
  if (choices.state !== 'ready') return null;
  return <IssueKeyModal teams={choices.data.teams} users={choices.data.users} onClose={onClose} onIssued={onIssued} />;
}

function KeysTable({
  page,
  names,
  filtered,
  sorting,
  mayManage,
  timeZone,
  onPage,
  onEdit: setEditing,
  onRotate: setRotating,
  onRevoke: setRevoking,
}: {
  page: KeyPage;
  names: Map<string, string>;
  filtered: boolean;
  sorting: TableSort;
  mayManage: boolean;
  timeZone: string;
  onPage: (offset: number) => void;
  onEdit: (k: Key) => void;
  onRotate: (k: Key) => void;
  onRevoke: (k: Key) => void;
}) {
  const shown = page.keys;
  const th = (column: string, header: string, kind: 'text' | 'count' = 'text') => (
    <SortableTh column={column} header={header} kind={kind} sorting={sorting} testIdPrefix="keys" />
  );
  return (
    <>
      <Card withBorder p={0}>
        {shown.length === 0 ? (
          <EmptyState title={filtered || page.total > 0 ? 'No key matches' : 'No keys yet'}>
            {filtered || page.total > 0
              ? 'Change the filter to see more keys.'
              : 'Issue a virtual key for an agent, or connect a client by OAuth: its key shows here too.'}
          </EmptyState>
        ) : (
          // Its own sideways scroll region, focusable: finance's rows have no control a keyboard could reach it by.
          <>
            <DataTable
              striped
              minWidth={900}
              label="Keys"
              data-testid="keys-table"
              head={
                <>
                  {th('name', 'Name')}
                  {th('kind', 'Kind')}
                  {th('prefix', 'Prefix')}
                  {th('team', 'Team')}
                  {th('owner', 'Owner')}
                  <Table.Th>Tags</Table.Th>
                  <Table.Th>Disclosure</Table.Th>
                  {th('lastUsedAt', 'Last used', 'count')}
                  {th('expiresAt', 'Expires')}
                  {th('createdAt', 'Created')}
                  <Table.Th>Status</Table.Th>
                  {mayManage && <Table.Th>Actions</Table.Th>}
                </>
              }
            >
              {shown.map((k) => {
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
                    <Table.Td>{k.lastUsedAt ? formatTimestamp(k.lastUsedAt, timeZone) : 'Never'}</Table.Td>
                    <Table.Td data-testid="key-expires">
                      {k.expiresAt ? formatTimestamp(k.expiresAt, timeZone) : 'Never'}
                    </Table.Td>
                    <Table.Td>{formatTimestamp(k.createdAt, timeZone)}</Table.Td>
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
          </>
        )}
      </Card>
      {page.total > 0 && (
        <Group justify="space-between">
          <Text size="sm" c="dimmed" data-testid="keys-summary" aria-live="polite">
            {shown.length === 0
              ? `No keys on this page of ${page.total.toLocaleString('en-US')}`
              : `Keys ${(page.offset + 1).toLocaleString('en-US')}–${(page.offset + shown.length).toLocaleString('en-US')} of ${page.total.toLocaleString('en-US')}`}
          </Text>
          <Group gap="xs">
            <Button
              variant="default"
              disabled={page.offset === 0}
              onClick={() => onPage(Math.max(0, page.offset - page.limit))}
              data-testid="keys-previous"
            >
              Previous
            </Button>
            <Button
              variant="default"
              disabled={page.offset + shown.length >= page.total}
              onClick={() => onPage(page.offset + page.limit)}
              data-testid="keys-next"
            >
              Next
            </Button>
          </Group>
        </Group>
      )}
    </>
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
