import { Button, Card, Chip, Group, MultiSelect, Select, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { useEffect, useMemo, useState } from 'react';
import { get } from '../api/admin-client';
import { Key, REPORT_DIMENSIONS, ReportDimension, SpendReport, Team, User } from '../api/admin-types';
import type { CatalogTool } from '../api/governance-types';
import { Money } from '../components/money-text';
import { EmptyState, ErrorState, LoadingState, ScopeNote } from '../components/page-states';
import { SpendPerDayChart } from '../components/spend-chart';
import { addDays, dayIn, isDay } from '../lib/dates';
import { formatMoney } from '../lib/money';
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
import { DIMENSION_LABELS, rowsCost, spendTable } from '../lib/spend-table';
import { tableToCsv } from '../lib/table-csv';
import { useLoad } from '../lib/use-load';
import { useOrgPath, useSession } from '../session';

const MAX_ROWS_SHOWN = 500;

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

/** Choices for each filter, from the lists the role may read (keys come back already scoped). */
async function loadFilterOptions(orgPath: string, scope: SpendScope, teamId: string | null) {
  const [teams, users, members, keys, upstreams, tools] = await Promise.all([
    scope === 'user' ? Promise.resolve([]) : get<Team[]>(`${orgPath}/teams`),
    scope === 'user' ? Promise.resolve([]) : get<User[]>(`${orgPath}/users`),
    scope === 'team' && teamId
      ? get<{ userId: string }[]>(`${orgPath}/teams/${teamId}/members`)
      : Promise.resolve(null),
    get<Key[]>(`${orgPath}/keys`),
    get<{ id: string; namespace: string }[]>(`${orgPath}/upstreams`),
    get<CatalogTool[]>(`${orgPath}/tools`),
  ]);
  const inTeam = members ? new Set(members.map((m) => m.userId)) : null;
  const options: Record<FilterParam, Option[]> = {
    teamId: teams.map((t) => ({ value: t.id, label: t.name })),
    userId: users.filter((u) => !inTeam || inTeam.has(u.id)).map((u) => ({ value: u.id, label: u.name ?? u.email })),
    keyId: keys.map((k) => ({ value: k.id, label: `${k.name} (${k.prefix})` })),
    upstreamId: upstreams.map((u) => ({ value: u.id, label: u.namespace })),
    tool: [...new Set(tools.map((t) => t.name))].sort().map((n) => ({ value: n, label: n })),
    tag: [...new Set(keys.flatMap((k) => k.tags ?? []))].sort().map((t) => ({ value: t, label: t })),
  };
  return { options, teamNames: new Map(teams.map((t) => [t.id, t.name])) };
}

export function SpendExplorerPage() {
  const { org, currency, me } = useSession();
  const orgPath = useOrgPath();
  const scope = spendScopeOf(me.role);
  const today = dayIn(org.timeZone);
  const defaults = useMemo<ExplorerView>(
    () => ({ from: addDays(today, -29), to: today, groupBy: DEFAULT_GROUP_BY[scope], filters: NO_FILTERS }),
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
  const query = reportQuery(view);

  // The API filters, groups and totals; the page shows its answer as it is.
  const report = useLoad<SpendReport | null>(
    async () => (rangeError ? null : get<SpendReport>(`${orgPath}/reports/spend?${query}`)),
    [orgPath, query, rangeError],
  );
  // The filters' choices are asked once the first report is in: the report goes first to the API.
  const [optionsWanted, setOptionsWanted] = useState(false);
  useEffect(() => {
    if (report.state !== 'loading') setOptionsWanted(true);
  }, [report.state]);
  const options = useLoad(
    () => (optionsWanted ? loadFilterOptions(orgPath, scope, me.teamId) : new Promise<never>(() => undefined)),
    [orgPath, scope, me.teamId, optionsWanted],
  );
  const ordered = REPORT_DIMENSIONS.filter((d) => dims.includes(d));
  // useLoad answers a new object each render: the memo keys on the report it loaded.
  const reportData = report.state === 'ready' ? report.data : null;
  const shown = useMemo(
    () => (reportData ? spendTable(reportData, ordered, currency) : null),
    [reportData, ordered.join(','), currency],
  );

  function downloadCsv() {
    if (!shown) return;
    const blob = new Blob([tableToCsv(shown)], { type: 'text/csv;charset=utf-8' });
    const a = document.createElement('a');
    a.href = URL.createObjectURL(blob);
    a.download = `spend-${from}-${to}${ordered.length ? `-by-${ordered.join('-')}` : ''}${filterParams.length ? '-filtered' : ''}.csv`;
    document.body.appendChild(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(a.href), 1000);
  }

  const scopeTeamId = (report.state === 'ready' && report.data?.scope?.id) || me.teamId;
  const teamName = options.state === 'ready' && scopeTeamId ? options.data.teamNames.get(scopeTeamId) : undefined;

  return (
    <Stack gap="lg">
      <ScopeNote
        scope={report.state === 'ready' && report.data?.scope ? report.data.scope.kind : scope}
        teamName={teamName}
      />
      <Card withBorder component="section" aria-label="Report settings">
        <Group align="flex-end" gap="md">
          <TextInput
            type="date"
            label="From"
            value={from}
            max={to}
            onChange={(e) => setView({ from: e.currentTarget.value })}
            data-testid="explorer-from"
          />
          <TextInput
            type="date"
            label="To"
            value={to}
            min={from}
            onChange={(e) => setView({ to: e.currentTarget.value })}
            data-testid="explorer-to"
          />
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
          <Button variant="default" onClick={downloadCsv} disabled={!shown} data-testid="explorer-download">
            Download CSV
          </Button>
        </Group>
        {options.state === 'error' && (
          <Text size="sm" c="red.8" mt="xs" role="alert">
            The filters’ choices could not be loaded ({options.error.message}); the report itself is unaffected.{' '}
            <Button size="compact-xs" variant="subtle" onClick={options.reload}>
              Try again
            </Button>
          </Text>
        )}
        <Text size="xs" c="gray.8" mt="xs" data-testid="explorer-note">
          {dims.includes('tag') &&
            'A call of a key with several tags counts in each tag’s row, so the total is the calls’ own sum, not the rows’. '}
          {filterParams.length > 0 &&
            `Filtered by ${filterParams.map((p) => FILTER_LABELS[p].toLowerCase()).join(', ')} (each filter narrows; within one, any of the chosen values). `}
          Days are calendar days as the report API counts them (
          {report.state === 'ready' && report.data ? report.data.timeZone : org.timeZone}). The CSV holds exactly the
          table below, its total line included; costs are exact decimals in {currency}. The address of this page keeps
          the view: share or bookmark it.
        </Text>
        {rangeError && (
          <Text c="red.8" size="sm" role="alert" mt="xs">
            {rangeError}
          </Text>
        )}
      </Card>

      {report.state === 'loading' && <LoadingState label="Running the report…" />}
      {report.state === 'error' && <ErrorState error={report.error} what="the spend report" onRetry={report.reload} />}
      {report.state === 'ready' && report.data && shown && (
        <ExplorerResult
          report={report.data}
          dims={ordered}
          shown={shown}
          currency={currency}
          filtered={filterParams.length > 0}
          onClearFilters={() => setView({ filters: NO_FILTERS })}
        />
      )}
    </Stack>
  );
}

function ExplorerResult({
  report,
  dims,
  shown,
  currency,
  filtered,
  onClearFilters,
}: {
  report: SpendReport;
  dims: ReportDimension[];
  shown: ReturnType<typeof spendTable>;
  currency: string;
  filtered: boolean;
  onClearFilters: () => void;
}) {
  if (report.rows.length === 0 || (dims.length === 0 && report.totals.calls === 0)) {
    return (
      <Card withBorder>
        {filtered ? (
          <EmptyState title="No calls match these filters in this range">
            Each filter narrows the report; remove one or widen the range.{' '}
            <Button size="compact-sm" variant="subtle" onClick={onClearFilters}>
              Clear filters
            </Button>
          </EmptyState>
        ) : (
          <EmptyState title="No calls in this range">
            Try a wider range, or check that keys are making governed calls through the edge.
          </EmptyState>
        )}
      </Card>
    );
  }
  // The rows must add up to the report's total; if they ever do not, say so rather than hide it.
  const consistent = dims.includes('tag') || rowsCost(report) === BigInt(report.totals.costMicros);
  const stackBy = dims.find((d) => d !== 'day') ?? null;
  return (
    <>
      {dims.includes('day') && (
        <Card withBorder component="section" aria-label="Spend per day">
          <Title order={2} size="h4" mb="sm">
            Spend per day
          </Title>
          <SpendPerDayChart
            report={report}
            stackBy={stackBy}
            currency={currency}
            title={`Spend per day${stackBy ? ` by ${stackBy}` : ''}`}
          />
        </Card>
      )}
      <Card withBorder component="section" aria-label="Spend table">
        <Group justify="space-between" mb="xs">
          <Title order={2} size="h4">
            {report.rows.length.toLocaleString()} rows · total{' '}
            <Money micros={report.totals.costMicros} testId="explorer-total-cost" />
          </Title>
          {!consistent && (
            <Text c="red.8" size="sm" role="alert">
              The rows do not add up to the report’s total.
            </Text>
          )}
        </Group>
        <Table.ScrollContainer minWidth={600} maxHeight={520}>
          <Table striped stickyHeader data-testid="explorer-table">
            <Table.Thead>
              <Table.Tr>
                {shown.headers.map((h, i) => (
                  <Table.Th key={h} ta={i >= dims.length ? 'right' : undefined}>
                    {h}
                  </Table.Th>
                ))}
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {shown.rows.slice(0, MAX_ROWS_SHOWN).map((cells, r) => (
                <Table.Tr key={r}>
                  {cells.map((c, i) => (
                    <Table.Td key={i} ta={i >= dims.length ? 'right' : undefined}>
                      {i === cells.length - 1 ? formatMoney(toMicrosString(c), currency) : c}
                    </Table.Td>
                  ))}
                </Table.Tr>
              ))}
            </Table.Tbody>
            <Table.Tfoot>
              <Table.Tr>
                {shown.footer!.map((c, i) => (
                  <Table.Th key={i} ta={i >= dims.length ? 'right' : undefined}>
                    {i === shown.footer!.length - 1 ? formatMoney(toMicrosString(c), currency) : c}
                  </Table.Th>
                ))}
              </Table.Tr>
            </Table.Tfoot>
          </Table>
        </Table.ScrollContainer>
        {report.rows.length > MAX_ROWS_SHOWN && (
          <Text size="sm" c="gray.8" mt="xs">
            Showing the first {MAX_ROWS_SHOWN} of {report.rows.length} rows; the CSV has them all.
          </Text>
        )}
      </Card>
    </>
  );
}

/** `"1.50"` -> `"1500000"`: the table's exact decimal back to micro-units for currency formatting. */
function toMicrosString(decimal: string): string {
  const negative = decimal.startsWith('-');
  const [units, fraction = ''] = decimal.replace('-', '').split('.');
  const micros = BigInt(units) * 1_000_000n + BigInt((fraction + '000000').slice(0, 6));
  return String(negative ? -micros : micros);
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
