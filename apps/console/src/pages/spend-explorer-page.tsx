import { Button, Card, Chip, Group, MultiSelect, Select, Stack, Text } from '@mantine/core';
import { useEffect, useMemo, useRef, useState } from 'react';
import { adminApi, answer, toApiError } from '../api/admin-client';
import { MAX_REPORT_TOP, spendReport } from '../api/spend-report';
import { REPORT_DIMENSIONS, ReportDimension, ReportRow, SpendReport } from '../api/admin-types';
import { ErrorState, LoadingState, ScopeNote } from '../components/page-states';
import { dayIn, isDay } from '../lib/dates';
import { DEFAULT_PRESET, presetRange } from '../lib/date-ranges';
import { RangePicker } from '../components/range-picker';
import { UpdatedAgo } from '../components/updated-ago';
import { PreviousPeriod } from '../components/previous-period';
import { KeyMultiPicker } from '../components/key-multi-picker';
import { keysByIds } from '../lib/keys-by-ids';
import {
  ExplorerView,
  FilterParam,
  NO_FILTERS,
  activeFilters,
  reportQuery,
  searchOfView,
  viewFromSearch,
} from '../lib/report-filter';
import { SpendScope, spendScopeOf } from '../lib/roles';
import { replaceSearch, useSearch } from '../lib/router';
import { DIMENSION_LABELS, spendCsv } from '../lib/spend-table';
import { tableToCsv } from '../lib/table-csv';
import { downloadText } from '../lib/download';
import { useLoad } from '../lib/use-load';
import { useSession } from '../session';
import { ExplorerResult, type ExplorerTableState } from './explorer-result';

/** Breakdowns worth offering a scope: a member's own usage has one team and one user. */
const DIMENSIONS_FOR: Record<SpendScope, readonly ReportDimension[]> = {
  org: REPORT_DIMENSIONS,
  team: REPORT_DIMENSIONS.filter((d) => d !== 'team'),
  user: REPORT_DIMENSIONS.filter((d) => d !== 'team' && d !== 'user'),
};
const DEFAULT_GROUP_BY: Record<SpendScope, ReportDimension[]> = {
  org: ['team', 'day'],
  team: ['user', 'day'],
  user: ['upstream', 'day'],
};
/** Filters a scope can use; the API forces the team (team admin) or the user (member) itself. */
const FILTERS_FOR: Record<SpendScope, readonly FilterParam[]> = {
  org: ['teamId', 'userId', 'keyId', 'upstreamId', 'tool', 'tag'],
  team: ['userId', 'keyId', 'upstreamId', 'tool', 'tag'],
  user: ['keyId', 'upstreamId', 'tool', 'tag'],
};
const FILTER_LABELS: Record<FilterParam, string> = {
  teamId: 'Team',
  userId: 'User',
  keyId: 'Key',
  upstreamId: 'Upstream',
  tool: 'Tool',
  tag: 'Key tag',
};

type Option = { value: string; label: string };

/**
 * Choices for each filter, from the lists the role may read (keys come back already scoped). Keys are not
 * listed (10,000 on the bench): the key filter searches them (KeyMultiPicker), and the key tags in reach come
 * with a one-key page.
 */
async function loadFilterOptions(orgId: string, scope: SpendScope, teamId: string | null) {
  const path = { orgId };
  const [teams, users, members, keyPage, upstreams, tools] = await Promise.all([
    scope === 'user' ? Promise.resolve([]) : answer(adminApi.GET('/v1/orgs/{orgId}/teams', { params: { path } })),
    scope === 'user' ? Promise.resolve([]) : answer(adminApi.GET('/v1/orgs/{orgId}/users', { params: { path } })),
    scope === 'team' && teamId
      ? answer(adminApi.GET('/v1/orgs/{orgId}/teams/{teamId}/members', { params: { path: { orgId, teamId } } }))
      : Promise.resolve(null),
    answer(adminApi.GET('/v1/orgs/{orgId}/keys/page', { params: { path, query: { limit: 1, inactive: true } } })),
    answer(adminApi.GET('/v1/orgs/{orgId}/upstreams', { params: { path } })),
    answer(adminApi.GET('/v1/orgs/{orgId}/tools', { params: { path } })),
  ]);
  const inTeam = members ? new Set(members.map((m) => m.userId)) : null;
  const options: Record<FilterParam, Option[]> = {
    teamId: teams.map((t) => ({ value: t.id, label: t.name })),
    userId: users.filter((u) => !inTeam || inTeam.has(u.id)).map((u) => ({ value: u.id, label: u.name ?? u.email })),
    keyId: [],
    upstreamId: upstreams.map((u) => ({ value: u.id, label: u.namespace })),
    tool: [...new Set(tools.map((t) => t.name))].sort().map((n) => ({ value: n, label: n })),
    tag: keyPage.tags.map((t) => ({ value: t, label: t })),
  };
  return {
    options,
    teamNames: new Map(teams.map((t) => [t.id, t.name])),
  };
}

export function SpendExplorerPage() {
  const { org, currency, me } = useSession();
  const scope = spendScopeOf(me.role);
  const today = dayIn(org.timeZone);
  const defaults = useMemo<ExplorerView>(
    // The same default as the Overview: the month to date in the org's zone.
    () => ({ ...presetRange(DEFAULT_PRESET, today), groupBy: DEFAULT_GROUP_BY[scope], filters: NO_FILTERS }),
    [today, scope],
  );
  // The query string is the view: a shared or bookmarked link opens the same report.
  const search = useSearch();
  const view = useMemo(() => viewFromSearch(search, defaults), [search, defaults]);
  const setView = (change: Partial<ExplorerView>) => replaceSearch(searchOfView({ ...view, ...change }, defaults));
  const setFilter = (p: FilterParam, values: string[]) => setView({ filters: { ...view.filters, [p]: values } });
  const { from, to, groupBy: dims, filters } = view;
  const rangeError = !isDay(from)
    ? 'Pick a start day'
    : !isDay(to)
      ? 'Pick an end day'
      : from > to
        ? 'The start is after the end'
        : null;

  const filterParams = activeFilters(filters);
  const params = reportQuery(view);
  // The previous period is compared under the same filters, as totals (no breakdown).
  const comparedFilters = useMemo(
    () => Object.fromEntries(Object.entries(params).filter(([k]) => k !== 'from' && k !== 'to' && k !== 'groupBy')),
    [JSON.stringify(params)],
  );
  // The load follows the query's value, not the object made anew at each render.
  const query = JSON.stringify(params);
  // The table's page and order belong to this report: another report starts on its first page.
  const [tableState, setTableState] = useState<ExplorerTableState & { query: string }>({
    query,
    sort: null,
    page: 1,
    pageSize: 50,
  });
  const table = tableState.query === query ? tableState : { ...tableState, query, sort: null, page: 1 };
  const tableQuery = `${table.sort ? `${table.sort.column}:${table.sort.direction}` : ''}|${table.page}|${table.pageSize}`;

  // The API filters, groups, totals, sorts and pages (keys by day run to tens of thousands of rows);
  // the page shows its answer as it is.
  const report = useLoad<SpendReport | null>(
    async () =>
      rangeError
        ? null
        : spendReport(org.id, {
            ...params,
            limit: table.pageSize,
            offset: (table.page - 1) * table.pageSize,
            ...(table.sort ? { sort: `${table.sort.column}:${table.sort.direction}` } : {}),
          }),
    [org.id, query, rangeError, tableQuery],
  );
  // While another page or order of the same report loads, the one shown stays (and keeps the focus).
  const lastShown = useRef<{ query: string; report: SpendReport } | null>(null);
  if (report.state === 'ready' && report.data) lastShown.current = { query, report: report.data };
  const shownReport =
    report.state === 'ready'
      ? report.data
      : report.state === 'loading' && lastShown.current?.query === query
        ? lastShown.current.report
        : null;
  const [csvBusy, setCsvBusy] = useState(false);
  const [csvError, setCsvError] = useState<string | null>(null);
  // The filters' choices are asked once the first report is in: the report goes first to the API.
  const [optionsWanted, setOptionsWanted] = useState(false);
  useEffect(() => {
    if (report.state !== 'loading') setOptionsWanted(true);
  }, [report.state]);
  const options = useLoad(
    () => (optionsWanted ? loadFilterOptions(org.id, scope, me.teamId) : new Promise<never>(() => undefined)),
    [org.id, scope, me.teamId, optionsWanted],
  );
  const ordered = REPORT_DIMENSIONS.filter((d) => dims.includes(d));
  // useLoad answers a new object each render: the memo keys on the report it loaded.
  const reportData = report.state === 'ready' ? report.data : null;
  const optionsData = options.state === 'ready' ? options.data : null;
  const scopeTeamId = (reportData?.scope?.kind === 'team' && reportData.scope.id) || me.teamId;
  const teamName = scopeTeamId ? optionsData?.teamNames.get(scopeTeamId) : undefined;

  async function downloadCsv() {
    if (!reportData) return;
    // The CSV is every row of the report, not the page shown: asked in full when wanted.
    setCsvBusy(true);
    setCsvError(null);
    let full: SpendReport;
    let keyTeams: Map<string, string>;
    try {
      // Every row up to the API's largest bound; a report with more is refused as the API's CSV refuses it.
      full = await spendReport(org.id, { ...params, top: MAX_REPORT_TOP });
      if (full.truncated) {
        setCsvError(
          `The report has more than ${MAX_REPORT_TOP.toLocaleString('en')} rows: narrow the date range, the breakdown or the filters.`,
        );
        return;
      }
      // Each key line's team: only the report's keys are looked up, by id.
      const keyIds = full.rows.flatMap((r) => (typeof r.keyId === 'string' ? [r.keyId] : []));
      keyTeams = new Map((await keysByIds(org.id, keyIds)).map((k) => [k.id, k.teamId]));
    } catch (err) {
      setCsvError(toApiError(err).message);
      return;
    } finally {
      setCsvBusy(false);
    }
    // The team of a line: its key's, else a team admin's own; names from the lists the role may read.
    const teamOf = (row: ReportRow) => {
      const id =
        (typeof row.keyId === 'string' && keyTeams.get(row.keyId)) ||
        (reportData.scope?.kind === 'team' ? reportData.scope.id : null) ||
        (scope === 'user' ? me.teamId : null);
      return id ? { id, name: optionsData?.teamNames.get(id) ?? '' } : null;
    };
    const csv = tableToCsv(spendCsv(full, ordered, { currency, teamOf }));
    downloadText(
      `spend-${from}-${to}${ordered.length ? `-by-${ordered.join('-')}` : ''}${filterParams.length ? '-filtered' : ''}.csv`,
      csv,
      'text/csv',
    );
  }

  return (
    <Stack gap="lg">
      <ScopeNote
        scope={report.state === 'ready' && report.data?.scope ? report.data.scope.kind : scope}
        teamName={teamName}
      />
      <Card withBorder component="section" aria-label="Report settings">
        <Group align="flex-end" gap="md">
          <RangePicker
            range={{ from, to }}
            today={today}
            timeZone={org.timeZone}
            onChange={(r) => setView(r)}
            testIdPrefix="explorer"
          />
          <UpdatedAgo stamp={reportData} onRefresh={report.reload} testId="explorer-updated" />
          <div role="group" aria-labelledby="group-by-label">
            <Text size="sm" fw={500} id="group-by-label" mb={4}>
              Group by
            </Text>
            <Chip.Group
              multiple
              value={dims}
              onChange={(v) => setView({ groupBy: REPORT_DIMENSIONS.filter((d) => v.includes(d)) })}
            >
              <Group gap={6}>
                {DIMENSIONS_FOR[scope].map((d) => (
                  <Chip key={d} value={d} size="sm">
                    {DIMENSION_LABELS[d]}
                  </Chip>
                ))}
              </Group>
            </Chip.Group>
          </div>
        </Group>
        <Group align="flex-end" gap="md" mt="md" role="group" aria-label="Filters">
          {FILTERS_FOR[scope].map((p) => (
            <FilterSelect
              key={p}
              param={p}
              value={filters[p]}
              onChange={(v) => setFilter(p, v)}
              data={options.state === 'ready' ? options.data.options[p] : []}
              loading={options.state === 'loading'}
            />
          ))}
          {filterParams.length > 0 && (
            <Button variant="subtle" onClick={() => setView({ filters: NO_FILTERS })} data-testid="explorer-clear">
              Clear filters
            </Button>
          )}
          <Button
            variant="default"
            onClick={downloadCsv}
            // The CSV names each line's team from the filter lists: wait for them unless they failed.
            disabled={!reportData || options.state === 'loading'}
            loading={csvBusy}
            data-testid="explorer-download"
          >
            Download CSV
          </Button>
        </Group>
        {csvError && (
          <Text size="sm" c="var(--tg-danger)" mt="xs" role="alert">
            The CSV could not be made: {csvError}
          </Text>
        )}
        {options.state === 'error' && (
          <Text size="sm" c="var(--tg-danger)" mt="xs" role="alert">
            The filters’ choices could not be loaded ({options.error.message}); the report itself is unaffected.{' '}
            <Button size="compact-xs" variant="subtle" onClick={options.reload}>
              Try again
            </Button>
          </Text>
        )}
        <Text size="xs" c="dimmed" mt="xs" data-testid="explorer-note">
          {dims.includes('tag') &&
            'A call of a key with several tags counts in each tag’s row, so the total is the calls’ own sum, not the rows’. '}
          {filterParams.length > 0 &&
            `Filtered by ${filterParams.map((p) => FILTER_LABELS[p].toLowerCase()).join(', ')} (each filter narrows; within one, any of the chosen values). `}
          Days are calendar days as the report API counts them (
          {report.state === 'ready' && report.data ? report.data.timeZone : org.timeZone}). Amounts show to four
          decimals (hover one for the exact amount). The CSV holds every row (not only this page), names with their ids,
          each line&rsquo;s team, the period, time zone and currency, and the total line; costs are exact decimals in{' '}
          {currency}. The address of this page keeps the view: share or bookmark it.
        </Text>
        {rangeError && (
          <Text c="var(--tg-danger)" size="sm" role="alert" mt="xs">
            {rangeError}
          </Text>
        )}
      </Card>

      {report.state === 'loading' && !shownReport && <LoadingState label="Running the report…" />}
      {report.state === 'error' && (
        <ErrorState
          error={report.error}
          what="the spend report"
          onRetry={report.reload}
          message={
            report.error.status === 403 && report.error.field
              ? `This view asks for a ${FILTER_LABELS[report.error.field as FilterParam]?.toLowerCase() ?? report.error.field} outside what you may see (a link from someone else, or an old bookmark).`
              : undefined
          }
          action={
            report.error.status === 403 && filterParams.length > 0 ? (
              <Button size="xs" variant="white" color="red" onClick={() => setView({ filters: NO_FILTERS })}>
                Show what you may see
              </Button>
            ) : undefined
          }
        />
      )}
      {shownReport && (
        <ExplorerResult
          report={shownReport}
          dims={ordered}
          currency={currency}
          filtered={filterParams.length > 0}
          onClearFilters={() => setView({ filters: NO_FILTERS })}
          table={table}
          onTable={(change) => setTableState({ ...table, ...change })}
          busy={report.state === 'loading'}
          comparison={
            <PreviousPeriod
              range={{ from, to }}
              filters={comparedFilters}
              current={shownReport.totals}
              testId="explorer-previous"
            />
          }
        />
      )}
    </Stack>
  );
}

function FilterSelect({
  param,
  value,
  onChange,
  data,
  loading,
}: {
  param: FilterParam;
  value: string[];
  onChange: (v: string[]) => void;
  data: Option[];
  loading: boolean;
}) {
  const label = FILTER_LABELS[param];
  if (param === 'keyId') return <KeyMultiPicker label={label} value={value} onChange={onChange} w={200} />;
  // A value from a shared link that is not among the choices (a deleted key, a tool gone) stays visible.
  const known = new Set(data.map((o) => o.value));
  const all = [...data, ...value.filter((v) => !known.has(v)).map((v) => ({ value: v, label: v }))];
  if (param === 'tag') {
    // The report API filters by one key tag.
    return (
      <Select
        label={label}
        placeholder={loading ? 'Loading…' : 'Any key tag'}
        clearable
        searchable
        value={value[0] ?? null}
        onChange={(v) => onChange(v ? [v] : [])}
        data={all}
        w={200}
        data-testid="explorer-filter-tag"
      />
    );
  }
  return (
    <MultiSelect
      label={label}
      placeholder={value.length ? undefined : loading ? 'Loading…' : `Any ${label.toLowerCase()}`}
      clearable
      searchable
      value={value}
      onChange={onChange}
      data={all}
      w={200}
      data-testid={`explorer-filter-${param}`}
    />
  );
}
