import { Anchor, Badge, Card, Group, Select, Stack, Table, Text, TextInput } from '@mantine/core';
import { useEffect, useMemo, useState } from 'react';
import { adminApi, answer } from '../api/admin-client';
import type { operations } from '../api/admin-api.gen';
import type { Team, User } from '../api/admin-types';
import type { CallLogRow } from '../api/calls-types';
import { CursorPager } from '../components/cursor-pager';
import { DataTable } from '../components/data-table';
import { KeyPicker } from '../components/key-picker';
import { Money } from '../components/money-text';
import { EmptyState, ErrorState, LoadingState, ScopeNote } from '../components/page-states';
import { RangePicker } from '../components/range-picker';
import { DEFAULT_PRESET, DayRange, presetRange } from '../lib/date-ranges';
import { dayIn, formatTimestamp, isDay } from '../lib/dates';
import { OUTCOME_LABELS, REFUSAL_CODE_LABELS, refusalLabel } from '../lib/refusal-codes';
import { PAGE_PATHS, navigate, replaceSearch, useSearch } from '../lib/router';
import { spendScopeOf } from '../lib/roles';
import { useCursorPages } from '../lib/use-cursor-pages';
import { useLoad } from '../lib/use-load';
import { useSession } from '../session';

/** Rows per page; "Older" asks for the next page with the API's keyset cursor. */
const PAGE_SIZE = 50;

interface Filters {
  teamId: string | null;
  keyId: string | null;
  userId: string | null;
  tool: string;
  outcome: string | null;
  code: string | null;
}

const FILTER_KEYS = ['teamId', 'keyId', 'userId', 'tool', 'outcome', 'code'] as const;
type CallsQuery = NonNullable<operations['CallsController_callLog']['parameters']['query']>;

/** The filters and range a URL names (a link from the Overview, a shared page). */
function readSearch(search: string, today: string): { filters: Filters; range: DayRange } {
  const p = new URLSearchParams(search);
  const from = p.get('from') ?? '';
  const to = p.get('to') ?? '';
  const range = isDay(from) && isDay(to) && from <= to ? { from, to } : presetRange(DEFAULT_PRESET, today);
  return {
    range,
    filters: {
      teamId: p.get('teamId'),
      keyId: p.get('keyId'),
      userId: p.get('userId'),
      tool: p.get('tool') ?? '',
      outcome: p.get('outcome'),
      code: p.get('code'),
    },
  };
}

/**
 * The per-call log (GET …/calls): every governed call the ledger holds and every refused call,
 * newest first, filtered by key, user, tool, outcome, refusal code and range, one page at a time
 * (the API's keyset cursor: any page costs what the first does, on millions of rows).
 */
export function CallsPage() {
  const { org, me } = useSession();
  const scope = spendScopeOf(me.role);
  const today = dayIn(org.timeZone);
  const search = useSearch();
  const initial = useMemo(() => readSearch(search, today), []);
  const [range, setRange] = useState<DayRange>(initial.range);
  const [filters, setFilters] = useState<Filters>(initial.filters);
  // The typed tool name is applied a moment after typing stops, not per keystroke.
  const [toolTyped, setToolTyped] = useState(initial.filters.tool);
  useEffect(() => {
    const t = setTimeout(
      () => setFilters((f) => (f.tool === toolTyped.trim() ? f : { ...f, tool: toolTyped.trim() })),
      400,
    );
    return () => clearTimeout(t);
  }, [toolTyped]);
  const params = useMemo(() => {
    const p: CallsQuery = { from: range.from, to: range.to };
    for (const k of FILTER_KEYS) if (filters[k]) p[k] = filters[k]!;
    return p;
  }, [range, filters]);
  const query = useMemo(
    () => new URLSearchParams(Object.entries(params).map(([k, v]) => [k, String(v)])).toString(),
    [params],
  );
  // The URL holds what the page shows; a new query starts again at the newest page.
  useEffect(() => replaceSearch(query), [query]);
  const pages = useCursorPages(
    query,
    (cursor) =>
      answer(
        adminApi.GET('/v1/orgs/{orgId}/calls', {
          params: { path: { orgId: org.id }, query: { ...params, limit: PAGE_SIZE, cursor } },
        }),
      ),
    [org.id],
  );
  const page = pages.page;
  // Choices only: without them the filters still take what a link put in the URL. Asked once the
  // first page is shown, so thousands of keys do not compete with the page's own call.
  const firstShown = page.state !== 'loading' || pages.hasPrevious;
  const [askChoices, setAskChoices] = useState(false);
  useEffect(() => {
    if (firstShown) setAskChoices(true);
  }, [firstShown]);
  const choices = useLoad(async () => {
    if (!askChoices) return { teams: [], users: [] };
    // Keys are searched as typed (KeyPicker): an org has thousands.
    const [teams, users] = await Promise.all([
      scope === 'org'
        ? answer(adminApi.GET('/v1/orgs/{orgId}/teams', { params: { path: { orgId: org.id } } })).catch(
            () => [] as Team[],
          )
        : Promise.resolve([] as Team[]),
      scope === 'user'
        ? Promise.resolve([] as User[])
        : answer(adminApi.GET('/v1/orgs/{orgId}/users', { params: { path: { orgId: org.id } } })).catch(
            () => [] as User[],
          ),
    ]);
    return {
      teams: teams.map((t) => ({ value: t.id, label: t.name })).sort((a, b) => a.label.localeCompare(b.label)),
      users: users
        .map((u) => ({ value: u.id, label: u.name ? `${u.name} <${u.email}>` : u.email }))
        .sort((a, b) => a.label.localeCompare(b.label)),
    };
  }, [org.id, askChoices]);
  const options = choices.state === 'ready' ? choices.data : { teams: [], users: [] };
  const withCurrent = (list: { value: string; label: string }[], id: string | null) =>
    id && !list.some((o) => o.value === id) ? [...list, { value: id, label: id }] : list;
  const set = (k: keyof Filters) => (v: string | null) => setFilters((f) => ({ ...f, [k]: v }));

  return (
    <Stack gap="md">
      <ScopeNote scope={scope} />
      <RangePicker range={range} today={today} timeZone={org.timeZone} onChange={setRange} testIdPrefix="calls" />
      <Group align="flex-end" wrap="wrap" gap="sm">
        {/* A team admin's team and a member's own calls are forced by the API: no team to choose. */}
        {scope === 'org' && (
          <Select
            label="Team"
            placeholder="Any team"
            clearable
            searchable
            data={withCurrent(options.teams, filters.teamId)}
            value={filters.teamId}
            onChange={set('teamId')}
            data-testid="calls-team"
            w={200}
          />
        )}
        <KeyPicker value={filters.keyId} onChange={set('keyId')} testId="calls-key" w={260} />
        {scope !== 'user' && (
          <Select
            label="User"
            placeholder="Anyone"
            clearable
            searchable
            limit={50}
            data={withCurrent(options.users, filters.userId)}
            value={filters.userId}
            onChange={set('userId')}
            data-testid="calls-user"
            w={260}
          />
        )}
        <TextInput
          label="Tool"
          placeholder="Any tool"
          value={toolTyped}
          onChange={(e) => setToolTyped(e.currentTarget.value)}
          data-testid="calls-tool"
          w={200}
        />
        <Select
          label="Outcome"
          placeholder="Any outcome"
          clearable
          data={Object.entries(OUTCOME_LABELS).map(([value, label]) => ({ value, label }))}
          value={filters.outcome}
          onChange={set('outcome')}
          data-testid="calls-outcome"
          w={180}
        />
        <Select
          label="Refused because"
          placeholder="Any reason"
          clearable
          searchable
          data={withCurrent(
            Object.entries(REFUSAL_CODE_LABELS).map(([value, label]) => ({ value, label })),
            filters.code,
          )}
          value={filters.code}
          onChange={set('code')}
          data-testid="calls-code"
          w={220}
        />
      </Group>
      <Card withBorder p={0}>
        {page.state === 'loading' && <LoadingState label="Loading calls…" />}
        {page.state === 'error' && <ErrorState error={page.error} what="the calls" onRetry={page.reload} />}
        {page.state === 'ready' &&
          (page.data.rows.length === 0 ? (
            <EmptyState title={pages.hasPrevious ? 'No older calls' : 'No call matches'}>
              Calls through the edge, and calls it refused, appear here within seconds.
            </EmptyState>
          ) : (
            // A scroll region of its own that the keyboard can reach (axe: scrollable-region-focusable).
            <div className="tg-table-scroll" role="region" aria-label="Calls, newest first" tabIndex={0}>
              <DataTable data-testid="calls-table" miw={960} verticalSpacing="xs" striped head={<CallsHead />}>
                {page.data.rows.map((r) => (
                  <CallRow key={r.id} row={r} timeZone={org.timeZone} />
                ))}
              </DataTable>
            </div>
          ))}
      </Card>
      <CursorPager
        pages={pages}
        summary={
          page.state === 'ready' &&
          `Page ${pages.number}: ${page.data.rows.length} ${page.data.rows.length === 1 ? 'call' : 'calls'}, newest first. Times in ${org.timeZone}.`
        }
        previousLabel="Newer"
        nextLabel="Older"
        testIdPrefix="calls"
      />
    </Stack>
  );
}

function CallsHead() {
  return (
    <>
      <Table.Th>When</Table.Th>
      <Table.Th>Outcome</Table.Th>
      <Table.Th>Tool</Table.Th>
      <Table.Th>Key</Table.Th>
      <Table.Th>User</Table.Th>
      <Table.Th ta="right">Cost</Table.Th>
      <Table.Th ta="right">Output tokens</Table.Th>
      <Table.Th ta="right">Latency</Table.Th>
    </>
  );
}

/** The agent trail of the call's session: what the agent read before it, and what it did next. */
function SessionTrailLink({ sessionId }: { sessionId: string }) {
  const href = `${PAGE_PATHS.trail}?sessionId=${encodeURIComponent(sessionId)}`;
  return (
    <Text size="xs">
      <Anchor
        href={href}
        c="var(--tg-info)"
        title={`What the agent read and did in session ${sessionId}`}
        onClick={(e) => {
          e.preventDefault();
          navigate(href);
        }}
        data-testid="call-row-trail"
      >
        session trail
      </Anchor>
    </Text>
  );
}

function CallRow({ row: r, timeZone }: { row: CallLogRow; timeZone: string }) {
  const refused = r.outcome === 'REFUSED';
  return (
    <Table.Tr data-testid="call-row" data-outcome={r.outcome} data-code={r.code ?? undefined}>
      <Table.Td style={{ whiteSpace: 'nowrap' }}>{formatTimestamp(r.occurredAt, timeZone)}</Table.Td>
      <Table.Td>
        <Badge
          variant="outline"
          color={refused ? 'red.9' : r.outcome === 'OK' ? 'teal.9' : 'orange.9'}
          c="var(--tg-strong)"
        >
          {refused ? refusalLabel(r.code ?? '') : OUTCOME_LABELS[r.outcome]}
        </Badge>
        {refused && r.calls > 1 && (
          <Text size="xs" c="dimmed" data-testid="call-row-counted">
            {r.calls.toLocaleString()} refusals counted together
          </Text>
        )}
      </Table.Td>
      <Table.Td style={{ wordBreak: 'break-word' }}>
        {r.upstreamNamespace ? `${r.upstreamNamespace}: ${r.toolName}` : r.toolName}
        {r.sessionId && <SessionTrailLink sessionId={r.sessionId} />}
      </Table.Td>
      <Table.Td style={{ wordBreak: 'break-word' }}>
        {r.keyName ?? r.keyId}
        {r.keyPrefix && (
          <Text span size="xs" c="dimmed">
            {' '}
            ({r.keyPrefix})
          </Text>
        )}
      </Table.Td>
      <Table.Td style={{ wordBreak: 'break-word' }}>{r.userEmail ?? r.userId}</Table.Td>
      <Table.Td ta="right">{refused ? '—' : <Money micros={r.costMicros} />}</Table.Td>
      <Table.Td ta="right">{refused ? '—' : r.outputTokens.toLocaleString()}</Table.Td>
      <Table.Td ta="right">{r.latencyMs.toLocaleString()} ms</Table.Td>
    </Table.Tr>
  );
}
