import { Badge, Card, Code, Group, Select, Stack, Table, Text, TextInput } from '@mantine/core';
import { useMemo, useState } from 'react';
import { get } from '../api/admin-client';
import type { AuditEvent } from '../api/oversight-types';
import { EmptyState, ErrorState, LoadingState } from '../components/page-states';
import { dayIn, formatTimestamp, isDay } from '../lib/dates';
import { useLoad } from '../lib/use-load';
import { useOrgPath, useSession } from '../session';

/** The most the audit route answers at once; filters apply to these latest changes. */
const AUDIT_PAGE = 500;

/** The person behind a row: name and email, else who holds the token, else the token id. */
export function actorLabel(e: AuditEvent): string {
  const a = e.actor;
  if (a?.user) return a.user.name ? `${a.user.name} <${a.user.email}>` : a.user.email;
  if (a?.ownerLabel) return a.ownerLabel;
  if (e.actorId === 'bootstrap') return 'Bootstrap token';
  return a?.tokenName ?? e.actorId;
}

export function AuditPage() {
  const { org } = useSession();
  const orgPath = useOrgPath();
  const events = useLoad<AuditEvent[]>(() => get<AuditEvent[]>(`${orgPath}/audit?limit=${AUDIT_PAGE}`), [orgPath]);
  const [actor, setActor] = useState<string | null>(null);
  const [action, setAction] = useState<string | null>(null);
  const [from, setFrom] = useState('');
  const [to, setTo] = useState('');

  const options = useMemo(() => {
    const rows = events.state === 'ready' ? events.data : [];
    return {
      actors: [...new Set(rows.map(actorLabel))].sort(),
      actions: [...new Set(rows.map((e) => e.action))].sort(),
    };
  }, [events]);

  if (events.state === 'loading') return <LoadingState label="Loading the audit log…" />;
  if (events.state === 'error') return <ErrorState error={events.error} what="the audit log" onRetry={events.reload} />;

  const badRange = (from && !isDay(from)) || (to && !isDay(to)) || (isDay(from) && isDay(to) && from > to);
  // Days are the org's calendar days: a change at 23:30 UTC may be the next day in Tokyo.
  const shown = events.data.filter((e) => {
    if (actor && actorLabel(e) !== actor) return false;
    if (action && e.action !== action) return false;
    const day = dayIn(org.timeZone, new Date(e.createdAt));
    if (isDay(from) && day < from) return false;
    if (isDay(to) && day > to) return false;
    return true;
  });

  return (
    <Stack gap="md">
      <Group align="flex-end">
        <Select
          label="Who"
          placeholder="Anyone"
          clearable
          searchable
          data={options.actors}
          value={actor}
          onChange={setActor}
          data-testid="audit-actor"
          w={280}
        />
        <Select
          label="Action"
          placeholder="Any action"
          clearable
          searchable
          data={options.actions}
          value={action}
          onChange={setAction}
          data-testid="audit-action"
          w={220}
        />
        <TextInput
          label="From"
          description={org.timeZone}
          type="date"
          value={from}
          onChange={(e) => setFrom(e.currentTarget.value)}
          data-testid="audit-from"
        />
        <TextInput
          label="To"
          description={org.timeZone}
          type="date"
          value={to}
          onChange={(e) => setTo(e.currentTarget.value)}
          error={badRange ? 'The range ends before it starts' : undefined}
          data-testid="audit-to"
        />
      </Group>
      <Text size="sm" c="gray.8">
        The latest {events.data.length === AUDIT_PAGE ? AUDIT_PAGE : events.data.length} changes; {shown.length} shown.
        Times in {org.timeZone}.
      </Text>
      <Card withBorder p={0}>
        {shown.length === 0 ? (
          <EmptyState title={events.data.length === 0 ? 'No changes recorded yet' : 'No change matches'}>
            {events.data.length === 0
              ? 'Every change made through the admin API (keys, policies, budgets…) is recorded here, with who made it.'
              : 'Widen the filters to see more.'}
          </EmptyState>
        ) : (
          <Table.ScrollContainer minWidth={1000}>
            <Table striped data-testid="audit-table">
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>When</Table.Th>
                  <Table.Th>Who</Table.Th>
                  <Table.Th>Token used</Table.Th>
                  <Table.Th>Action</Table.Th>
                  <Table.Th>Target</Table.Th>
                  <Table.Th>Details</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {shown.map((e) => (
                  <Table.Tr key={e.id} data-testid="audit-row" data-action={e.action}>
                    <Table.Td style={{ whiteSpace: 'nowrap' }}>{formatTimestamp(e.createdAt, org.timeZone)}</Table.Td>
                    <Table.Td data-testid="audit-who">
                      {e.actor?.user ? (
                        <>
                          <Text size="sm" fw={600}>
                            {e.actor.user.name ?? e.actor.user.email}
                          </Text>
                          <Text size="xs" c="gray.8">
                            {e.actor.user.email}
                          </Text>
                        </>
                      ) : (
                        actorLabel(e)
                      )}
                    </Table.Td>
                    <Table.Td data-testid="audit-token">
                      <Text size="sm">{e.actor?.tokenName ?? e.actorId}</Text>
                      {e.actor && (
                        <Group gap={4}>
                          {e.actor.tokenPrefix && <Code>{e.actor.tokenPrefix}…</Code>}
                          <Badge variant="outline" color="gray.8" c="dark.9" size="xs">
                            {e.actor.role.replace('_', ' ').toLowerCase()}
                          </Badge>
                        </Group>
                      )}
                    </Table.Td>
                    <Table.Td>
                      <Code>{e.action}</Code>
                    </Table.Td>
                    <Table.Td>
                      {e.targetType}
                      {e.targetId && (
                        <Text size="xs" c="gray.8" ff="monospace">
                          {e.targetId}
                        </Text>
                      )}
                    </Table.Td>
                    <Table.Td maw={360}>
                      <Text size="xs" ff="monospace" lineClamp={3} title={JSON.stringify(e.details)}>
                        {e.details ? JSON.stringify(e.details) : '—'}
                      </Text>
                    </Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          </Table.ScrollContainer>
        )}
      </Card>
    </Stack>
  );
}
