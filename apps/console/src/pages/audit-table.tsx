import { Anchor, Badge, Code, Group, List, Stack, Table, Text } from '@mantine/core';
import { Fragment, useState } from 'react';
import type { AuditEvent } from '../api/oversight-types';
import { DataTable } from '../components/data-table';
import { sortableHeads, sortedBy, useTableSort } from '../components/sortable-th';
import type { ColumnSpec } from '../lib/table-model';
import { RowAction } from '../components/row-action';
import { formatTimestamp } from '../lib/dates';
import { fieldLabel, formatChangeValue } from '../lib/audit-log';
import { roleLabel } from '../lib/labels';
import { useSession } from '../session';

/** The person behind a row: name and email, else who holds the token, else the token id. */
export function actorLabel(e: Pick<AuditEvent, 'actor' | 'actorId'>): string {
  const a = e.actor;
  if (a?.user) return a.user.name ? `${a.user.name} <${a.user.email}>` : a.user.email;
  if (a?.ownerLabel) return a.ownerLabel;
  if (e.actorId === 'bootstrap') return 'Bootstrap token';
  return a?.tokenName ?? e.actorId;
}

/** At most this many changed fields show in a row; the rest are behind "Show". */
const FIELDS_SHOWN = 3;

/**
 * The audit log as a change log: who, what, the target by its name (its id one click away as a filter), and
 * each changed field before → after, money in the org's currency.
 */
export function AuditTable({
  events,
  onTarget,
}: {
  events: AuditEvent[];
  /** Show only the changes of this target. */
  onTarget: (targetType: string, targetId: string) => void;
}) {
  const { org, currency } = useSession();
  const [open, setOpen] = useState<Set<string>>(new Set());
  const toggle = (id: string) =>
    setOpen((s) => {
      const next = new Set(s);
      if (next.has(id)) next.delete(id);
      else next.add(id);
      return next;
    });

  // The API answers newest first, a page at a time (a keyset cursor): a header sorts the changes loaded so far,
  // in the browser, and says so; the next page still comes by time.
  const sorting = useTableSort();
  const columns: ColumnSpec<AuditEvent>[] = [
    { id: 'when', header: 'When', kind: 'text', value: (e) => e.createdAt },
    { id: 'who', header: 'Who', kind: 'text', value: actorLabel },
    { id: 'token', header: 'Token used', kind: 'text', value: (e) => e.actor?.tokenName ?? e.actorId },
    { id: 'action', header: 'Action', kind: 'text', value: (e) => e.action },
    { id: 'target', header: 'Target', kind: 'text', value: (e) => e.targetName ?? e.targetId ?? null },
  ];
  const th = sortableHeads(columns, sorting, 'audit');
  const sorted = sortedBy(events, columns, sorting);

  return (
    <>
      {sorting.sort && (
        <Text size="sm" c="dimmed" px="md" pt="sm" role="status" data-testid="audit-sort-note">
          Sorted by {columns.find((c) => c.id === sorting.sort?.column)?.header.toLowerCase()} among the{' '}
          {events.length.toLocaleString()} changes loaded; the log itself comes newest first, and older changes load by
          time.
        </Text>
      )}
      <DataTable
        striped
        data-testid="audit-table"
        minWidth={1000}
        label="Audit log"
        head={
          <>
            {th('when')}
            {th('who')}
            {th('token')}
            {th('action')}
            {th('target')}
            <Table.Th>Before → after</Table.Th>
          </>
        }
      >
        {sorted.map((e) => {
          const expanded = open.has(e.id);
          // Ids are for machines: the target's name says it, and the raw record (Show) keeps them.
          // Money first (what finance looks for), then the rest as recorded.
          const changes = (e.changes ?? [])
            .filter((c) => !/Ids?$/.test(c.field))
            .sort((a, b) => Number(/Micros$/.test(b.field)) - Number(/Micros$/.test(a.field)));
          const shown = expanded ? changes : changes.slice(0, FIELDS_SHOWN);
          return (
            <Fragment key={e.id}>
              <Table.Tr data-testid="audit-row" data-action={e.action} data-id={e.id}>
                <Table.Td style={{ whiteSpace: 'nowrap' }}>{formatTimestamp(e.createdAt, org.timeZone)}</Table.Td>
                <Table.Td data-testid="audit-who">
                  {e.actor?.user ? (
                    <>
                      <Text size="sm" fw={600}>
                        {e.actor.user.name ?? e.actor.user.email}
                      </Text>
                      <Text size="xs" c="dimmed">
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
                      <Badge variant="outline" color="gray.8" c="var(--tg-strong)" size="xs">
                        {roleLabel(e.actor.role)}
                      </Badge>
                    </Group>
                  )}
                </Table.Td>
                <Table.Td>
                  <Code>{e.action}</Code>
                </Table.Td>
                <Table.Td data-testid="audit-target" maw={260} style={{ wordBreak: 'break-word' }}>
                  <Text size="sm" fw={600} data-testid="audit-target-name">
                    {e.targetName ?? (e.targetId ? 'unnamed' : '—')}
                  </Text>
                  <Text size="xs" c="dimmed">
                    {e.targetType}
                    {e.targetId && (
                      <>
                        {' · '}
                        <Anchor
                          component="button"
                          type="button"
                          size="xs"
                          c="var(--tg-info)"
                          title={`Show only the changes of this target (${e.targetId})`}
                          aria-label={`its history: only the changes of ${e.targetName ?? e.targetId}`}
                          onClick={() => onTarget(e.targetType, e.targetId!)}
                          data-testid="audit-target-filter"
                        >
                          its history
                        </Anchor>
                      </>
                    )}
                  </Text>
                </Table.Td>
                <Table.Td maw={420}>
                  <Group gap="xs" wrap="nowrap" align="flex-start" justify="space-between">
                    {changes.length === 0 ? (
                      <Text size="sm" c="dimmed">
                        No field detail
                      </Text>
                    ) : (
                      <List size="sm" spacing={2} listStyleType="none" data-testid="audit-changes">
                        {shown.map((c) => (
                          <List.Item key={c.field} data-testid="audit-change" data-field={c.field}>
                            <Text span size="sm" fw={600}>
                              {fieldLabel(c.field)}
                            </Text>
                            {': '}
                            {c.before !== undefined && c.before !== null && (
                              <>
                                <Text span size="sm" td="line-through" c="dimmed" data-testid="audit-before">
                                  {formatChangeValue(c.field, c.before, currency)}
                                </Text>
                                {' → '}
                              </>
                            )}
                            <Text span size="sm" data-testid="audit-after">
                              {c.after === null ? 'removed' : formatChangeValue(c.field, c.after, currency)}
                            </Text>
                          </List.Item>
                        ))}
                        {!expanded && changes.length > FIELDS_SHOWN && (
                          <List.Item>
                            <Text span size="xs" c="dimmed">
                              and {changes.length - FIELDS_SHOWN} more
                            </Text>
                          </List.Item>
                        )}
                      </List>
                    )}
                    <RowAction
                      size="compact-xs"
                      aria-expanded={expanded}
                      aria-controls={expanded ? `audit-details-${e.id}` : undefined}
                      onClick={() => toggle(e.id)}
                      data-testid="audit-details-toggle"
                    >
                      {expanded ? 'Hide' : 'Show'}
                    </RowAction>
                  </Group>
                </Table.Td>
              </Table.Tr>
              {expanded && (
                <Table.Tr id={`audit-details-${e.id}`} data-testid="audit-details">
                  <Table.Td colSpan={6}>
                    <Stack gap={4}>
                      <Text size="xs" c="dimmed">
                        Event {e.id}
                        {e.targetId ? ` · target ${e.targetId}` : ''} · as recorded:
                      </Text>
                      <Code block>{JSON.stringify(e.details ?? {}, null, 2)}</Code>
                    </Stack>
                  </Table.Td>
                </Table.Tr>
              )}
            </Fragment>
          );
        })}
      </DataTable>
    </>
  );
}
