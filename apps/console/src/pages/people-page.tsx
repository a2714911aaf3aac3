import { Badge, Button, Card, Group, NativeSelect, Stack, Table, Text, Title } from '@mantine/core';
import { useState } from 'react';
import { adminApi, answer, toApiError } from '../api/admin-client';
import type { components } from '../api/admin-api.gen';
import type { Key, Team, User } from '../api/admin-types';
import { ConfirmModal } from '../components/confirm-modal';
import { DataTable } from '../components/data-table';
import { sortableHeads, sortedBy, useTableSort } from '../components/sortable-th';
import type { ColumnSpec } from '../lib/table-model';
import { EmptyState, ErrorState, LoadingState } from '../components/page-states';
import { RowAction } from '../components/row-action';
import { formatTimestamp } from '../lib/dates';
import { canManageOrg } from '../lib/roles';
import { useLoad } from '../lib/use-load';
import { useSession } from '../session';
import { TeamNameModal, PersonModal, AddMemberModal, OffboardModal } from './people-modals';

export type Person = User;
type Membership = Pick<components['schemas']['TeamMemberView'], 'teamId' | 'userId' | 'isTeamAdmin'>;
interface PeopleData {
  teams: Team[];
  people: Person[];
  memberships: Membership[];
  /** Null when they could not be listed (a role that may not, or an error): the dialogs say so. */
}

const ORG_ROLE_OPTIONS = [
  { value: 'NONE', label: 'No org role (team roles only)' },
  { value: 'ORG_ADMIN', label: 'Org admin' },
  { value: 'FINANCE', label: 'Finance' },
];

/**
 * Teams, people, their memberships (and who is a team's admin), org roles and offboarding: what
 * an org admin needs before anyone can be issued a key. Other roles read what the API lets them.
 */
export function PeoplePage() {
  const { me, org } = useSession();
  const mayManage = canManageOrg(me.role);
  const data = useLoad<PeopleData>(async () => {
    const path = { orgId: org.id };
    const [teams, people] = await Promise.all([
      answer(adminApi.GET('/v1/orgs/{orgId}/teams', { params: { path } })),
      answer(adminApi.GET('/v1/orgs/{orgId}/users', { params: { path } })),
    ]);
    // One request per team for its members; org roles come with the users list.
    const memberLists = await Promise.all(
      teams.map((t) =>
        answer(
          adminApi.GET('/v1/orgs/{orgId}/teams/{teamId}/members', { params: { path: { ...path, teamId: t.id } } }),
        ),
      ),
    );
    return { teams, people, memberships: memberLists.flat() };
  }, [org.id]);
  // Only the removal and offboarding dialogs count a person's keys: an org's thousands of keys are
  // read once the page is shown, not before it (nor beside its own calls).
  const shown = data.state === 'ready';
  const keyList = useLoad(
    () =>
      shown
        ? answer(adminApi.GET('/v1/orgs/{orgId}/keys', { params: { path: { orgId: org.id } } })).catch(() => null)
        : Promise.resolve(null),
    [org.id, shown],
  );
  const keys = keyList.state === 'ready' ? keyList.data : null;
  const [dialog, setDialog] = useState<
    | { kind: 'team' }
    | { kind: 'rename'; team: Team }
    | { kind: 'person' }
    | { kind: 'member'; team: Team }
    | { kind: 'remove'; team: Team; person: Person }
    | { kind: 'offboard'; person: Person }
    | null
  >(null);
  const [done, setDone] = useState<string | null>(null);
  const sorting = useTableSort();

  if (data.state === 'loading') return <LoadingState label="Loading teams and people…" />;
  if (data.state === 'error') return <ErrorState error={data.error} what="teams and people" onRetry={data.reload} />;
  const { teams, people, memberships } = data.data;
  const personName = (id: string) => {
    const p = people.find((x) => x.id === id);
    return p ? (p.name ?? p.email) : id;
  };
  const teamsOf = (p: Person) =>
    memberships
      .filter((m) => m.userId === p.id)
      .map((m) => `${teams.find((t) => t.id === m.teamId)?.name ?? m.teamId}${m.isTeamAdmin ? ' (admin)' : ''}`)
      .join(', ');
  const roleOf = (p: Person) => ORG_ROLE_OPTIONS.find((o) => o.value === (p.orgRole ?? 'NONE'))?.label ?? '—';
  const columns: ColumnSpec<Person>[] = [
    { id: 'name', header: 'Name', kind: 'text', value: (p) => p.name ?? p.email },
    { id: 'teams', header: 'Teams', kind: 'text', value: (p) => teamsOf(p) || null },
    { id: 'role', header: 'Org role', kind: 'text', value: roleOf },
    // Active before offboarded (A→Z), the offboarded by when.
    {
      id: 'status',
      header: 'Status',
      kind: 'text',
      value: (p) => (p.offboardedAt ? `Offboarded ${p.offboardedAt}` : 'Active'),
    },
  ];
  const th = sortableHeads(columns, sorting, 'people');
  const sortedPeople = sortedBy(people, columns, sorting);
  const close = (message?: string) => {
    setDialog(null);
    if (message) setDone(message);
    data.reload();
    keyList.reload();
  };

  return (
    <Stack gap="xl">
      {done && (
        <Text role="status" data-testid="people-done" c="var(--tg-strong)">
          {done}
        </Text>
      )}
      <Card withBorder component="section" aria-labelledby="teams-title" p={0}>
        <Group justify="space-between" p="md">
          <Title order={2} size="h4" id="teams-title">
            Teams
          </Title>
          {mayManage && (
            <Button size="xs" onClick={() => setDialog({ kind: 'team' })} data-testid="new-team">
              New team
            </Button>
          )}
        </Group>
        {teams.length === 0 ? (
          <EmptyState title="No team yet">
            Keys spend for a team: create one, add people to it, then issue them keys.
          </EmptyState>
        ) : (
          <DataTable
            data-testid="teams-table"
            head={
              <>
                <Table.Th>Team</Table.Th>
                <Table.Th>Members</Table.Th>
                {mayManage && <Table.Th>Actions</Table.Th>}
              </>
            }
          >
            {teams.map((t) => {
              const members = memberships.filter((m) => m.teamId === t.id);
              return (
                <Table.Tr key={t.id} data-testid="team-row" data-team={t.name}>
                  <Table.Td fw={600}>{t.name}</Table.Td>
                  <Table.Td>
                    {members.length === 0 ? (
                      <Text size="sm" c="dimmed">
                        Nobody yet
                      </Text>
                    ) : (
                      <Group gap={6}>
                        {members.map((m) => (
                          <Group key={m.userId} gap={4} wrap="nowrap" data-testid="member-chip">
                            <Text size="sm">{personName(m.userId)}</Text>
                            {m.isTeamAdmin && (
                              <Badge size="xs" variant="outline" c="var(--tg-strong)">
                                team admin
                              </Badge>
                            )}
                            {mayManage && (
                              <RowAction
                                onClick={() =>
                                  setDialog({ kind: 'remove', team: t, person: people.find((p) => p.id === m.userId)! })
                                }
                                aria-label={`Remove ${personName(m.userId)} from ${t.name}`}
                                danger
                              >
                                Remove
                              </RowAction>
                            )}
                          </Group>
                        ))}
                      </Group>
                    )}
                  </Table.Td>
                  {mayManage && (
                    <Table.Td>
                      <Group gap="xs" wrap="nowrap">
                        <RowAction
                          onClick={() => setDialog({ kind: 'member', team: t })}
                          aria-label={`Add member to ${t.name}`}
                        >
                          Add member
                        </RowAction>
                        <RowAction
                          onClick={() => setDialog({ kind: 'rename', team: t })}
                          aria-label={`Rename ${t.name}`}
                        >
                          Rename
                        </RowAction>
                      </Group>
                    </Table.Td>
                  )}
                </Table.Tr>
              );
            })}
          </DataTable>
        )}
      </Card>

      <Card withBorder component="section" aria-labelledby="people-title" p={0}>
        <Group justify="space-between" p="md">
          <Title order={2} size="h4" id="people-title">
            People
          </Title>
          {mayManage && (
            <Button size="xs" onClick={() => setDialog({ kind: 'person' })} data-testid="new-person">
              Add a person
            </Button>
          )}
        </Group>
        {people.length === 0 ? (
          <EmptyState title="Nobody yet">Add people, or let single sign-on create them as they sign in.</EmptyState>
        ) : (
          <DataTable
            data-testid="people-table"
            head={
              <>
                {th('name')}
                {th('teams')}
                {th('role')}
                {th('status')}
                {mayManage && <Table.Th>Actions</Table.Th>}
              </>
            }
          >
            {sortedPeople.map((p) => {
              const mine = teamsOf(p);
              return (
                <Table.Tr key={p.id} data-testid="person-row" data-email={p.email}>
                  <Table.Td>
                    <Text size="sm" fw={600}>
                      {p.name ?? p.email}
                    </Text>
                    {p.name && (
                      <Text size="xs" c="dimmed">
                        {p.email}
                      </Text>
                    )}
                  </Table.Td>
                  <Table.Td>{mine || '—'}</Table.Td>
                  <Table.Td>
                    {mayManage && !p.offboardedAt ? (
                      <OrgRoleSelect person={p} onChanged={(m) => close(m)} />
                    ) : (
                      roleOf(p)
                    )}
                  </Table.Td>
                  <Table.Td data-testid="person-status">
                    {p.offboardedAt ? `Offboarded ${formatTimestamp(p.offboardedAt, org.timeZone)}` : 'Active'}
                  </Table.Td>
                  {mayManage && (
                    <Table.Td>
                      {!p.offboardedAt && p.id !== me.user?.id && (
                        <RowAction
                          danger
                          onClick={() => setDialog({ kind: 'offboard', person: p })}
                          aria-label={`Offboard ${p.name ?? p.email}`}
                        >
                          Offboard
                        </RowAction>
                      )}
                    </Table.Td>
                  )}
                </Table.Tr>
              );
            })}
          </DataTable>
        )}
      </Card>

      {dialog?.kind === 'team' && <TeamNameModal onClose={() => setDialog(null)} onSaved={close} />}
      {dialog?.kind === 'rename' && (
        <TeamNameModal team={dialog.team} onClose={() => setDialog(null)} onSaved={close} />
      )}
      {dialog?.kind === 'person' && <PersonModal onClose={() => setDialog(null)} onSaved={close} />}
      {dialog?.kind === 'member' && (
        <AddMemberModal
          team={dialog.team}
          people={people.filter(
            (p) => !p.offboardedAt && !memberships.some((m) => m.teamId === dialog.team.id && m.userId === p.id),
          )}
          onClose={() => setDialog(null)}
          onSaved={close}
        />
      )}
      {dialog?.kind === 'remove' && (
        <ConfirmModal
          title={`Remove ${dialog.person.name ?? dialog.person.email} from ${dialog.team.name}?`}
          confirmLabel="Remove from team"
          testId="confirm-remove-member"
          onClose={() => setDialog(null)}
          onConfirm={async () => {
            const r = await answer(
              adminApi.DELETE('/v1/orgs/{orgId}/teams/{teamId}/members/{userId}', {
                params: { path: { orgId: org.id, teamId: dialog.team.id, userId: dialog.person.id } },
              }),
            );
            close(`Removed from ${dialog.team.name}; ${r.revokedKeyIds.length} key(s) of theirs in the team revoked.`);
          }}
        >
          <Text size="sm">
            Their keys in this team are revoked at once
            {keys && ` (${activeKeys(keys, dialog.person.id, dialog.team.id).length} now active)`}. Spend already
            recorded stays in the reports.
          </Text>
        </ConfirmModal>
      )}
      {dialog?.kind === 'offboard' && (
        <OffboardModal
          person={dialog.person}
          keys={keys && activeKeys(keys, dialog.person.id)}
          teams={memberships
            .filter((m) => m.userId === dialog.person.id)
            .map((m) => teams.find((t) => t.id === m.teamId)?.name ?? m.teamId)}
          onClose={() => setDialog(null)}
          onDone={close}
        />
      )}
    </Stack>
  );
}

function activeKeys(keys: Key[], userId: string, teamId?: string): Key[] {
  const now = Date.now();
  return keys.filter(
    (k) =>
      k.userId === userId &&
      (!teamId || k.teamId === teamId) &&
      !k.revokedAt &&
      (!k.expiresAt || Date.parse(k.expiresAt) > now),
  );
}

function OrgRoleSelect({ person, onChanged }: { person: Person; onChanged: (message: string) => void }) {
  const { org } = useSession();
  const [error, setError] = useState<string | null>(null);
  return (
    // A native select: a combobox per person (hundreds) made the page take seconds to render, each
    // one searching the whole document as it mounted.
    <NativeSelect
      aria-label={`Org role of ${person.name ?? person.email}`}
      size="xs"
      data={ORG_ROLE_OPTIONS}
      value={person.orgRole ?? 'NONE'}
      error={error}
      data-testid="org-role"
      onChange={async (e) => {
        const v = e.currentTarget.value;
        setError(null);
        try {
          await answer(
            adminApi.PUT('/v1/orgs/{orgId}/users/{userId}/org-role', {
              params: { path: { orgId: org.id, userId: person.id } },
              body: { role: v === 'ORG_ADMIN' || v === 'FINANCE' ? v : null },
            }),
          );
          onChanged(
            `${person.name ?? person.email} is now ${ORG_ROLE_OPTIONS.find((o) => o.value === v)?.label.toLowerCase()}.`,
          );
        } catch (err) {
          setError(toApiError(err).message);
        }
      }}
    />
  );
}
