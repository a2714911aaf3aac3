import { Button, Card, Group, Select, Stack, Text, TextInput } from '@mantine/core';
import { useDebouncedValue } from '@mantine/hooks';
import { useMemo, useState } from 'react';
import { ApiError, adminApi, answer, toApiError } from '../api/admin-client';
import type { components, operations } from '../api/admin-api.gen';
import type { AuditEvent } from '../api/oversight-types';
import { EmptyState, ErrorState, LoadingState } from '../components/page-states';
import { auditCsv } from '../lib/audit-log';
import { RANGE_PRESETS, RangePreset, presetOf, presetRange } from '../lib/date-ranges';
import { dayIn, isDay, sortableTimestamp } from '../lib/dates';
import { downloadText } from '../lib/download';
import { tableToCsv } from '../lib/table-csv';
import { useLoad } from '../lib/use-load';
import { useSession } from '../session';
import { AuditTable, actorLabel } from './audit-table';

/** Rows fetched per page; "Load more" asks for the next page with the API's cursor. */
const PAGE_SIZE = 50;

/** `GET …/audit/search`: a page, latest first, and the cursor of the next (null on the last). */
type AuditSearchPage = components['schemas']['AuditPageView'];
type AuditQuery = NonNullable<operations['AuditController_searchAuditEvents']['parameters']['query']>;

/** `GET …/audit/facets`: what the org's trail holds, offered as filters. */
type AuditFacets = components['schemas']['AuditFacetsView'];

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

/** The search's parameters, or null while a date is incomplete or the range is backwards. */
function searchQuery(f: Filters): AuditQuery | null {
  if ((f.from && !isDay(f.from)) || (f.to && !isDay(f.to))) return null;
  if (f.from && f.to && f.from > f.to) return null;
  return { limit: PAGE_SIZE, ...filterParams(f) };
}

/** An export reads the whole match, page after page, up to this many changes (then it says it stopped). */
const EXPORT_LIMIT = 20_000;
const EXPORT_PAGE = 500;

function filterParams(f: Filters): AuditQuery {
  const q: AuditQuery = {};
  if (f.action) q.action = f.action;
  if (f.actor) q.actor = f.actor;
  if (f.targetType) q.targetType = f.targetType;
  if (f.targetId.trim()) q.targetId = f.targetId.trim();
  // Days of the org's calendar: the API counts them in the org's time zone, as the reports do.
  if (f.from) q.from = f.from;
  if (f.to) q.to = f.to;
  return q;
}

export function AuditPage() {
  const { org, currency } = useSession();
  const today = dayIn(org.timeZone);
  const [filters, setFilters] = useState<Filters>(NO_FILTERS);
  const set =
    <K extends keyof Filters>(key: K) =>
    (value: Filters[K]) =>
      setFilters((f) => ({ ...f, [key]: value }));
  // Typing a target id asks once the typing pauses, not at every key.
  const [targetId] = useDebouncedValue(filters.targetId, 300);
  const query = searchQuery({ ...filters, targetId });
  // The loads follow the query's value, not the object made anew at each render.
  const queryKey = query === null ? null : JSON.stringify(query);
  const search = (q: AuditQuery) =>
    answer(adminApi.GET('/v1/orgs/{orgId}/audit/search', { params: { path: { orgId: org.id }, query: q } }));
  const filtered = JSON.stringify({ ...filters, targetId: filters.targetId.trim() }) !== JSON.stringify(NO_FILTERS);

  const facets = useLoad<AuditFacets>(
    () => answer(adminApi.GET('/v1/orgs/{orgId}/audit/facets', { params: { path: { orgId: org.id } } })),
    [org.id],
  );
  const first = useLoad<AuditSearchPage | null>(
    () => (query === null ? Promise.resolve(null) : search(query)),
    [org.id, queryKey],
  );
  // Pages after the first, and the state of the next one, tied to the first page they follow: a new
  // query or a reloaded first page is a new object, so whatever arrives for an older one is ignored.
  const [more, setMore] = useState<{ after: AuditSearchPage; events: AuditEvent[]; nextCursor: string | null }>();
  const [moreState, setMoreState] = useState<{ after: AuditSearchPage; status: 'loading' | ApiError }>();
  const [exporting, setExporting] = useState<'csv' | 'json' | null>(null);
  const [exportNote, setExportNote] = useState<string | null>(null);

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
    search({ ...query, cursor: nextCursor }).then(
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

  /** Every change the filters match (not only the pages loaded), as CSV or JSON. */
  const exportAll = async (format: 'csv' | 'json') => {
    if (query === null) return;
    setExporting(format);
    setExportNote(null);
    try {
      const all: AuditEvent[] = [];
      let cursor: string | null = null;
      do {
        const next: AuditSearchPage = await search({
          limit: EXPORT_PAGE,
          ...filterParams({ ...filters, targetId }),
          ...(cursor ? { cursor } : {}),
        });
        all.push(...next.events);
        cursor = next.nextCursor;
      } while (cursor && all.length < EXPORT_LIMIT);
      const name = `audit-${org.slug}-${filters.from || 'start'}-${filters.to || today}`;
      if (format === 'csv') {
        const table = auditCsv(all, org.timeZone, currency, (t) => sortableTimestamp(t, org.timeZone));
        downloadText(`${name}.csv`, tableToCsv(table), 'text/csv');
      } else {
        const body = { org: { id: org.id, name: org.name, timeZone: org.timeZone, currency }, events: all };
        downloadText(`${name}.json`, JSON.stringify(body, null, 2), 'application/json');
      }
      setExportNote(
        cursor
          ? `Exported the latest ${all.length.toLocaleString()} changes; narrow the filters for older ones.`
          : `Exported ${all.length.toLocaleString()} ${all.length === 1 ? 'change' : 'changes'}.`,
      );
    } catch (err) {
      setExportNote(`The export failed: ${toApiError(err).message}`);
    } finally {
      setExporting(null);
    }
  };

  const preset = isDay(filters.from) && isDay(filters.to) ? presetOf(filters, today) : null;
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
        <Select
          label="Range"
          description="Presets or days"
          data={[
            { value: 'all', label: 'Any time' },
            ...RANGE_PRESETS.map((p) => ({ value: p.id, label: p.label })),
            { value: 'custom', label: 'Custom days' },
          ]}
          value={preset ?? (filters.from || filters.to ? 'custom' : 'all')}
          onChange={(v) => {
            if (v === 'all') setFilters((f) => ({ ...f, from: '', to: '' }));
            else if (v && v !== 'custom') setFilters((f) => ({ ...f, ...presetRange(v as RangePreset, today) }));
          }}
          allowDeselect={false}
          w={170}
          data-testid="audit-preset"
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
        <Text size="sm" c="dimmed" data-testid="audit-summary" aria-live="polite">
          {page
            ? `${events.length} ${events.length === 1 ? 'change' : 'changes'} shown, newest first${nextCursor ? '; older ones below' : ''}. Times in ${org.timeZone}.`
            : `Times in ${org.timeZone}.`}
        </Text>
        <Group gap="xs">
          {filtered && (
            <Button variant="subtle" size="xs" onClick={() => setFilters(NO_FILTERS)} data-testid="audit-clear">
              Clear filters
            </Button>
          )}
          <Button
            variant="default"
            size="xs"
            onClick={() => exportAll('csv')}
            loading={exporting === 'csv'}
            disabled={query === null || exporting !== null}
            data-testid="audit-export-csv"
          >
            Export CSV
          </Button>
          <Button
            variant="default"
            size="xs"
            onClick={() => exportAll('json')}
            loading={exporting === 'json'}
            disabled={query === null || exporting !== null}
            data-testid="audit-export-json"
          >
            Export JSON
          </Button>
        </Group>
      </Group>
      {exportNote && (
        <Text size="sm" c="dimmed" role="status" data-testid="audit-export-note">
          {exportNote} The CSV has one line per changed field; money is an exact decimal in {currency}.
        </Text>
      )}
      {facets.state === 'error' && (
        <Text size="sm" c="var(--tg-danger)">
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
          <AuditTable
            events={events}
            onTarget={(targetType, id) => setFilters((f) => ({ ...f, targetType, targetId: id }))}
          />
        )}
      </Card>
      {page && events.length > 0 && (
        <Group justify="center">
          {nextCursor ? (
            <Button variant="light" onClick={loadMore} loading={moreStatus === 'loading'} data-testid="audit-load-more">
              Load {PAGE_SIZE} older changes
            </Button>
          ) : (
            <Text size="sm" c="dimmed" data-testid="audit-end">
              That is every matching change.
            </Text>
          )}
        </Group>
      )}
      {moreStatus instanceof ApiError && <ErrorState error={moreStatus} what="older changes" onRetry={loadMore} />}
    </Stack>
  );
}
