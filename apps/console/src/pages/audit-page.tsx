import { Anchor, Badge, Button, Card, Code, Group, Select, Stack, Table, Text, TextInput } from '@mantine/core';
import { useDebouncedValue } from '@mantine/hooks';
import { Fragment, useMemo, useState } from 'react';
import { ApiError, get, toApiError } from '../api/admin-client';
import type { AuditEvent } from '../api/oversight-types';
import { EmptyState, ErrorState, LoadingState } from '../components/page-states';
import { RowAction } from '../components/row-action';
import { formatTimestamp, isDay } from '../lib/dates';
import { useLoad } from '../lib/use-load';
import { useOrgPath, useSession } from '../session';
import { DataTable } from '../components/data-table';

/** Rows fetched per page; "Load more" asks for the next page with the API's cursor. */
const PAGE_SIZE = 50;

/** `GET …/audit/search`: a page, latest first, and the cursor of the next (null on the last). */
interface AuditSearchPage {
  events: AuditEvent[];
  nextCursor: string | null;
}

type AuditActor = NonNullable<AuditEvent['actor']>;

/** `GET …/audit/facets`: what the org's trail holds, offered as filters. */
interface AuditFacets {
  actions: string[];
  targetTypes: string[];
  /** `id`: the person's user id, else the token id (what the `actor` filter takes). */
  actors: { id: string; actorId: string; actor: AuditActor | null }[];
}

/** The person behind a row: name and email, else who holds the token, else the token id. */
export function actorLabel(e: Pick<AuditEvent, 'actor' | 'actorId'>): string {
  const a = e.actor;
  if (a?.user) return a.user.name ? `${a.user.name} <${a.user.email}>` : a.user.email;
  if (a?.ownerLabel) return a.ownerLabel;
  if (e.actorId === 'bootstrap') return 'Bootstrap token';
  return a?.tokenName ?? e.actorId;
}

/** Action choices: a category (`key.*`) for each `key.…` family, then every action seen. */
function actionOptions(actions: string[]) {
  const categories = [...new Set(actions.map((a) => a.split('.')[0]))].sort();
  return [
    { group: 'Categories', items: categories.map((c) => ({ value: `${c}.*`, label: `${c}.* (every ${c} change)` })) },
    { group: 'Actions', items: actions.map((a) => ({ value: a, label: a })) },
  ];
}

interface Filters {
  action: string | null;
  actor: string | null;
  targetType: string | null;
  targetId: string;
  from: string;
  to: string;
}

const NO_FILTERS: Filters = { action: null, actor: null, targetType: null, targetId: '', from: '', to: '' };

/** The search's query string, or null while a date is incomplete or the range is backwards. */
function searchQuery(f: Filters): string | null {
  if ((f.from && !isDay(f.from)) || (f.to && !isDay(f.to))) return null;
  if (f.from && f.to && f.from > f.to) return null;
  const q = new URLSearchParams({ limit: String(PAGE_SIZE) });
  if (f.action) q.set('action', f.action);
  if (f.actor) q.set('actor', f.actor);
  if (f.targetType) q.set('targetType', f.targetType);
  if (f.targetId.trim()) q.set('targetId', f.targetId.trim());
  // Days of the org's calendar: the API counts them in the org's time zone, as the reports do.
  if (f.from) q.set('from', f.from);
  if (f.to) q.set('to', f.to);
  return q.toString();
}

export function AuditPage() {
  const { org } = useSession();
  const orgPath = useOrgPath();
  const [filters, setFilters] = useState<Filters>(NO_FILTERS);
  const set =
    <K extends keyof Filters>(key: K) =>
    (value: Filters[K]) =>
      setFilters((f) => ({ ...f, [key]: value }));
  // Typing a target id asks once the typing pauses, not at every key.
  const [targetId] = useDebouncedValue(filters.targetId, 300);
  const query = searchQuery({ ...filters, targetId });
  const filtered = JSON.stringify({ ...filters, targetId: filters.targetId.trim() }) !== JSON.stringify(NO_FILTERS);

  const facets = useLoad<AuditFacets>(() => get<AuditFacets>(`${orgPath}/audit/facets`), [orgPath]);
  const first = useLoad<AuditSearchPage | null>(
    () => (query === null ? Promise.resolve(null) : get<AuditSearchPage>(`${orgPath}/audit/search?${query}`)),
    [orgPath, query],
  );
  // Pages after the first, and the state of the next one, tied to the first page they follow: a new
  // query or a reloaded first page is a new object, so whatever arrives for an older one is ignored.
  const [more, setMore] = useState<{ after: AuditSearchPage; events: AuditEvent[]; nextCursor: string | null }>();
  const [moreState, setMoreState] = useState<{ after: AuditSearchPage; status: 'loading' | ApiError }>();
  const [open, setOpen] = useState<Set<string>>(new Set());

  // useLoad returns a new object each render: depend on the data it holds.
  const facetData = facets.state === 'ready' ? facets.data : null;
  const options = useMemo(() => {
    const f = facetData ?? { actions: [], targetTypes: [], actors: [] };
    return {
      actions: actionOptions(f.actions),
      actors: f.actors
        .map((a) => ({ value: a.id, label: actorLabel(a) }))
        .sort((x, y) => x.label.localeCompare(y.label)),
      targetTypes: f.targetTypes,
    };
  }, [facetData]);

  const page = first.state === 'ready' ? first.data : null;
  const extra = page && more?.after === page ? more : null;
  const moreStatus = page && moreState?.after === page ? moreState.status : 'idle';
  const events = page ? [...page.events, ...(extra?.events ?? [])] : [];
  const nextCursor = extra ? extra.nextCursor : (page?.nextCursor ?? null);

  const loadMore = () => {
    if (!page || !nextCursor || query === null) return;
    const after = page;
    setMoreState({ after, status: 'loading' });
    get<AuditSearchPage>(`${orgPath}/audit/search?${query}&cursor=${encodeURIComponent(nextCursor)}`).then(
      (next) => {
        setMore((m) => ({
          after,
          events: [...(m?.after === after ? m.events : []), ...next.events],
          nextCursor: next.nextCursor,
        }));
        setMoreState((s) => (s?.after === after ? undefined : s));
      },
      (err: unknown) => setMoreState((s) => (s?.after === after ? { after, status: toApiError(err) } : s)),
    );
  };

  const toggle = (id: string) =>
    setOpen((s) => {
      const next = new Set(s);
      if (next.has(id)) next.delete(id);
      else next.add(id);
      return next;
    });

  const badFrom = filters.from !== '' && !isDay(filters.from);
  const badTo = filters.to !== '' && !isDay(filters.to);
  const backwards = isDay(filters.from) && isDay(filters.to) && filters.from > filters.to;

  return (
    <Stack gap="md">
      <Group align="flex-start" wrap="wrap">
        {(
          [
            ['action', 'Action', 'Any action', options.actions, 'audit-action', 240],
            ['actor', 'Who', 'Anyone', options.actors, 'audit-actor', 320],
            ['targetType', 'Target type', 'Any target', options.targetTypes, 'audit-target-type', 180],
          ] as const
        ).map(([key, label, placeholder, choices, testId, width]) => (
          <Select
            key={key}
            label={label}
            placeholder={placeholder}
            clearable
            searchable
            data={choices}
            value={filters[key]}
            onChange={set(key)}
            data-testid={testId}
            w={width}
          />
        ))}
        <TextInput
          label="Target id"
          placeholder="Any id"
          value={filters.targetId}
          onChange={(e) => set('targetId')(e.currentTarget.value)}
          data-testid="audit-target-id"
          w={300}
        />
        <TextInput
          label="From"
          description={org.timeZone}
          type="date"
          value={filters.from}
          onChange={(e) => set('from')(e.currentTarget.value)}
          error={badFrom ? 'A date YYYY-MM-DD' : undefined}
          data-testid="audit-from"
        />
        <TextInput
          label="To"
          description={org.timeZone}
          type="date"
          value={filters.to}
          onChange={(e) => set('to')(e.currentTarget.value)}
          error={badTo ? 'A date YYYY-MM-DD' : backwards ? 'The range ends before it starts' : undefined}
          data-testid="audit-to"
        />
      </Group>
      <Group justify="space-between">
        <Text size="sm" c="gray.8" data-testid="audit-summary" aria-live="polite">
          {page
            ? `${events.length} ${events.length === 1 ? 'change' : 'changes'} shown, newest first${nextCursor ? '; older ones below' : ''}. Times in ${org.timeZone}.`
            : `Times in ${org.timeZone}.`}
        </Text>
        {filtered && (
          <Button variant="subtle" size="xs" onClick={() => setFilters(NO_FILTERS)} data-testid="audit-clear">
            Clear filters
          </Button>
        )}
      </Group>
      {facets.state === 'error' && (
        <Text size="sm" c="red.9">
          The filter choices could not be loaded ({facets.error.message}); the log itself is below.
        </Text>
      )}
      <Card withBorder p={0}>
        {query === null ? (
          <EmptyState title="Finish the date range">
            Both days are calendar days in {org.timeZone}, and the range must not end before it starts.
          </EmptyState>
        ) : first.state === 'loading' ? (
          <LoadingState label="Loading the audit log…" />
        ) : first.state === 'error' ? (
          <ErrorState error={first.error} what="the audit log" onRetry={first.reload} />
        ) : events.length === 0 ? (
          <EmptyState title={filtered ? 'No change matches' : 'No changes recorded yet'}>
            {filtered
              ? 'Widen the filters to see more: every change ever recorded is searched, not only the latest.'
              : 'Every change made through the admin API (keys, policies, budgets…) is recorded here, with who made it.'}
          </EmptyState>
        ) : (
          <DataTable
            striped
            data-testid="audit-table"
            minWidth={1000}
            head={
              <>
                <Table.Th>When</Table.Th>
                <Table.Th>Who</Table.Th>
                <Table.Th>Token used</Table.Th>
                <Table.Th>Action</Table.Th>
                <Table.Th>Target</Table.Th>
                <Table.Th>Details</Table.Th>
              </>
            }
          >
            {events.map((e) => {
              const expanded = open.has(e.id);
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
                        <Anchor
                          component="button"
                          type="button"
                          size="xs"
                          ff="monospace"
                          display="block"
                          c="indigo.9"
                          title="Show only the changes of this target"
                          onClick={() =>
                            setFilters((f) => ({ ...f, targetType: e.targetType, targetId: e.targetId ?? '' }))
                          }
                        >
                          {e.targetId}
                        </Anchor>
                      )}
                    </Table.Td>
                    <Table.Td maw={360}>
                      <Group gap="xs" wrap="nowrap" align="flex-start">
                        <Text size="xs" ff="monospace" lineClamp={2} style={{ flex: 1 }}>
                          {e.details ? JSON.stringify(e.details) : '—'}
                        </Text>
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
                          <Text size="xs" c="gray.8">
                            Event {e.id}
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
        )}
      </Card>
      {page && events.length > 0 && (
        <Group justify="center">
          {nextCursor ? (
            <Button variant="light" onClick={loadMore} loading={moreStatus === 'loading'} data-testid="audit-load-more">
              Load {PAGE_SIZE} older changes
            </Button>
          ) : (
            <Text size="sm" c="gray.8" data-testid="audit-end">
              That is every matching change.
            </Text>
          )}
        </Group>
      )}
      {moreStatus instanceof ApiError && <ErrorState error={moreStatus} what="older changes" onRetry={loadMore} />}
    </Stack>
  );
}
