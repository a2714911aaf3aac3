import { Button, Card, Chip, Group, Select, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { useMemo, useState } from 'react';
import { get } from '../api/admin-client';
import { Key, REPORT_DIMENSIONS, ReportDimension, SpendReport, Team, User } from '../api/admin-types';
import { Money } from '../components/money-text';
import { EmptyState, ErrorState, LoadingState } from '../components/page-states';
import { SpendPerDayChart } from '../components/spend-chart';
import { addDays, dayIn, isDay } from '../lib/dates';
import { formatMoney } from '../lib/money';
import { DIMENSION_LABELS, rowsCost, spendTable } from '../lib/spend-table';
import { activeFilters, filterReport, ReportFilters } from '../lib/report-filter';
import { tableToCsv } from '../lib/table-csv';
import { useLoad } from '../lib/use-load';
import { useOrgPath, useSession } from '../session';

const MAX_ROWS_SHOWN = 500;

export function SpendExplorerPage() {
  const { org, currency } = useSession();
  const orgPath = useOrgPath();
  const today = dayIn(org.timeZone);
  const [from, setFrom] = useState(addDays(today, -29));
  const [to, setTo] = useState(today);
  const [dims, setDims] = useState<ReportDimension[]>(['team', 'day']);
  const rangeError = !isDay(from)
    ? 'Pick a start day'
    : !isDay(to)
      ? 'Pick an end day'
      : from > to
        ? 'The start is after the end'
        : null;

  const [filters, setFilters] = useState<ReportFilters>({});
  const [tag, setTag] = useState<string | null>(null);
  const options = useLoad(async () => {
    const [teams, users, keys, upstreams] = await Promise.all([
      get<Team[]>(`${orgPath}/teams`),
      get<User[]>(`${orgPath}/users`),
      get<Key[]>(`${orgPath}/keys`),
      get<{ id: string; namespace: string }[]>(`${orgPath}/upstreams`),
    ]);
    return { teams, users, keys, upstreams, tags: [...new Set(keys.flatMap((k) => k.tags ?? []))].sort() };
  }, [orgPath]);
  const filterDims = activeFilters(filters);
  const filterKey = JSON.stringify(filters);

  // The API filters by tag; other filters are its rows grouped by them too, kept and folded back.
  const report = useLoad<SpendReport | null>(async () => {
    if (rangeError) return null;
    const base = `${orgPath}/reports/spend?from=${from}&to=${to}${tag ? `&tag=${encodeURIComponent(tag)}` : ''}`;
    const asked = REPORT_DIMENSIONS.filter((d) => dims.includes(d) || (filterDims as string[]).includes(d));
    const raw = await get<SpendReport>(`${base}&groupBy=${asked.join(',')}`);
    if (filterDims.length === 0) return raw;
    const totalsSource = dims.includes('tag') ? await get<SpendReport>(`${base}&groupBy=${filterDims.join(',')}`) : raw;
    return filterReport(
      raw,
      REPORT_DIMENSIONS.filter((d) => dims.includes(d)),
      filters,
      totalsSource,
    );
  }, [orgPath, from, to, dims.join(','), rangeError, filterKey, tag]);
  const ordered = REPORT_DIMENSIONS.filter((d) => dims.includes(d));
  const shown = useMemo(
    () => (report.state === 'ready' && report.data ? spendTable(report.data, dims, currency) : null),
    [report, dims, currency],
  );

  function downloadCsv() {
    if (!shown) return;
    const blob = new Blob([tableToCsv(shown)], { type: 'text/csv;charset=utf-8' });
    const a = document.createElement('a');
    a.href = URL.createObjectURL(blob);
    a.download = `spend-${from}-${to}${dims.length ? `-by-${dims.join('-')}` : ''}.csv`;
    document.body.appendChild(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(a.href), 1000);
  }

  return (
    <Stack gap="lg">
      <Card withBorder component="section" aria-label="Report settings">
        <Group align="flex-end" gap="md">
          <TextInput
            type="date"
            label="From"
            value={from}
            max={to}
            onChange={(e) => setFrom(e.currentTarget.value)}
            data-testid="explorer-from"
          />
          <TextInput
            type="date"
            label="To"
            value={to}
            min={from}
            onChange={(e) => setTo(e.currentTarget.value)}
            data-testid="explorer-to"
          />
          <div role="group" aria-labelledby="group-by-label">
            <Text size="sm" fw={500} id="group-by-label" mb={4}>
              Group by
            </Text>
            <Chip.Group multiple value={dims} onChange={(v) => setDims(REPORT_DIMENSIONS.filter((d) => v.includes(d)))}>
              <Group gap={6}>
                {REPORT_DIMENSIONS.map((d) => (
                  <Chip key={d} value={d} size="sm">
                    {DIMENSION_LABELS[d]}
                  </Chip>
                ))}
              </Group>
            </Chip.Group>
          </div>
        </Group>
        <Group align="flex-end" gap="md" mt="md" role="group" aria-label="Filters">
          <FilterSelect
            label="Team"
            value={filters.team}
            onChange={(v) => setFilters({ ...filters, team: v })}
            data={options.state === 'ready' ? options.data.teams.map((t) => ({ value: t.id, label: t.name })) : []}
          />
          <FilterSelect
            label="User"
            value={filters.user}
            onChange={(v) => setFilters({ ...filters, user: v })}
            data={
              options.state === 'ready'
                ? options.data.users.map((u) => ({ value: u.id, label: u.name ?? u.email }))
                : []
            }
          />
          <FilterSelect
            label="Key"
            value={filters.key}
            onChange={(v) => setFilters({ ...filters, key: v })}
            data={
              options.state === 'ready'
                ? options.data.keys.map((k) => ({ value: k.id, label: `${k.name} (${k.prefix})` }))
                : []
            }
          />
          <FilterSelect
            label="Upstream"
            value={filters.upstream}
            onChange={(v) => setFilters({ ...filters, upstream: v })}
            data={
              options.state === 'ready' ? options.data.upstreams.map((u) => ({ value: u.id, label: u.namespace })) : []
            }
          />
          <TextInput
            label="Tool name"
            placeholder="Any tool"
            value={filters.tool ?? ''}
            onChange={(e) => setFilters({ ...filters, tool: e.currentTarget.value.trim() || undefined })}
            w={160}
            data-testid="explorer-filter-tool"
          />
          <Select
            label="Key tag"
            placeholder="Any tag"
            clearable
            value={tag}
            onChange={setTag}
            data={options.state === 'ready' ? options.data.tags : []}
            w={180}
            data-testid="explorer-filter-tag"
          />
          <Button variant="default" onClick={downloadCsv} disabled={!shown} data-testid="explorer-download">
            Download CSV
          </Button>
        </Group>
        <Text size="xs" c="gray.8" mt="xs" data-testid="explorer-note">
          {dims.includes('tag') &&
            'A call of a key with several tags counts in each tag’s row, so the total is the calls’ own sum, not the rows’. '}
          {filterDims.length > 0 &&
            `Filtered by ${filterDims.join(', ')}: the report API’s rows grouped by them too, kept and summed exactly. `}
          Days are calendar days as the report API counts them (
          {report.state === 'ready' && report.data ? report.data.timeZone : org.timeZone}). The CSV holds exactly the
          table below, its total line included; costs are exact decimals in {currency}.
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
        <ExplorerResult report={report.data} dims={ordered} shown={shown} currency={currency} />
      )}
    </Stack>
  );
}

function ExplorerResult({
  report,
  dims,
  shown,
  currency,
}: {
  report: SpendReport;
  dims: ReportDimension[];
  shown: ReturnType<typeof spendTable>;
  currency: string;
}) {
  if (report.rows.length === 0) {
    return (
      <Card withBorder>
        <EmptyState title="No spend in this range">
          Try a wider range, or check that keys are making governed calls through the edge.
        </EmptyState>
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
  label,
  value,
  onChange,
  data,
}: {
  label: string;
  value: string | undefined;
  onChange: (v: string | undefined) => void;
  data: { value: string; label: string }[];
}) {
  return (
    <Select
      label={label}
      placeholder={`Any ${label.toLowerCase()}`}
      clearable
      searchable
      value={value ?? null}
      onChange={(v) => onChange(v ?? undefined)}
      data={data}
      w={180}
      data-testid={`explorer-filter-${label.toLowerCase()}`}
    />
  );
}
