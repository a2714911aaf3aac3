import { Button, Card, Group, Text, Title } from '@mantine/core';
import { type ReactNode, useMemo } from 'react';
import { ReportDimension, ReportRow, SpendReport } from '../api/admin-types';
import { FigureTableView, type FigureColumn } from '../components/data-table';
import { Money } from '../components/money-text';
import { EmptyState } from '../components/page-states';
import { SpendPerDayChart } from '../components/spend-chart';
import { rowLabel } from '@tollgate/reporting/row-label';
import { DIMENSION_LABELS, rowsCost } from '../lib/spend-table';
import { nextSort, type SortState, type TableLine } from '../lib/table-model';

/** Which page of the report's table is asked for, on which column sorted: the API sorts and pages. */
export interface ExplorerTableState {
  sort: SortState | null;
  page: number;
  pageSize: number;
}

/** The page's rows with the subtotal lines the API placed among them. */
function linesOf(report: SpendReport): TableLine<ReportRow>[] {
  const subtotals = report.page?.subtotals ?? [];
  const subtotalsAfter = (i: number): TableLine<ReportRow>[] =>
    subtotals
      .filter((s) => s.afterRow === i)
      .map((s) => ({
        kind: 'subtotal',
        group: s.group,
        rows: s.rows,
        sums: {
          calls: BigInt(s.figures.calls),
          errors: BigInt(s.figures.errors),
          outputTokens: BigInt(s.figures.outputTokens),
          costMicros: BigInt(s.figures.costMicros),
        },
      }));
  return [
    ...subtotalsAfter(-1),
    ...report.rows.flatMap((row, i): TableLine<ReportRow>[] => [{ kind: 'row', row }, ...subtotalsAfter(i)]),
  ];
}

export function ExplorerResult({
  report,
  dims,
  currency,
  filtered,
  onClearFilters,
  table,
  onTable,
  busy,
  comparison,
}: {
  /** One page of the report (asked with limit/offset/sort): its rows, subtotal lines and chart series. */
  report: SpendReport;
  dims: ReportDimension[];
  currency: string;
  filtered: boolean;
  onClearFilters: () => void;
  table: ExplorerTableState;
  onTable: (change: Partial<ExplorerTableState>) => void;
  /** The next page or order is being fetched; this one stays shown meanwhile. */
  busy: boolean;
  /** The same filters over the previous period of the range. */
  comparison?: ReactNode;
}) {
  const totalRows = report.page?.totalRows ?? report.rows.length;
  // The rows must add up to the report's total; if they ever do not, say so rather than hide it (checked
  // when the page holds every row).
  const consistent = useMemo(
    () =>
      dims.includes('tag') || totalRows > report.rows.length || rowsCost(report) === BigInt(report.totals.costMicros),
    [report, dims],
  );
  const lines = useMemo(() => linesOf(report), [report]);
  if (totalRows === 0 || (dims.length === 0 && report.totals.calls === 0)) {
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
  const stackBy = dims.find((d) => d !== 'day') ?? null;
  const totalLines = report.page?.totalLines ?? lines.length;
  return (
    <>
      {dims.includes('day') && report.perDay && (
        <Card withBorder component="section" aria-label="Spend per day">
          <Title order={2} size="h4" mb="sm">
            Spend per day
          </Title>
          <SpendPerDayChart
            perDay={report.perDay}
            currency={currency}
            title={`Spend per day${stackBy ? ` by ${stackBy}` : ''}`}
          />
        </Card>
      )}
      <Card withBorder component="section" aria-label="Spend table" aria-busy={busy || undefined}>
        <Group justify="space-between" mb="xs">
          <Title order={2} size="h4">
            {totalRows.toLocaleString()} rows · total{' '}
            <Money micros={report.totals.costMicros} testId="explorer-total-cost" />
          </Title>
          {comparison}
          {!consistent && (
            <Text c="var(--tg-danger)" size="sm" role="alert">
              The rows do not add up to the report’s total.
            </Text>
          )}
        </Group>
        {/* Two or more breakdowns: the API puts a subtotal after each value of the first (a team's days…). */}
        <FigureTableView
          label="Spend table"
          testId="explorer-table"
          rowTestId="explorer-row"
          columns={explorerColumns(dims)}
          lines={lines}
          rowKey={(_, i) => String(i)}
          total={{ ...report.totals }}
          sort={table.sort}
          onSort={(column) =>
            onTable({
              page: 1,
              sort: nextSort(table.sort, column, dims.includes(column as ReportDimension) ? 'text' : 'count'),
            })
          }
          pager={{
            page: table.page,
            pages: Math.max(1, Math.ceil(totalLines / table.pageSize)),
            pageSize: table.pageSize,
            totalLines,
            onPage: (page) => onTable({ page }),
            onPageSize: (pageSize) => onTable({ pageSize, page: 1 }),
          }}
          minWidth={600}
        />
      </Card>
    </>
  );
}

/** The explorer's columns: one per breakdown, then the figures (sortable, exact). */
function explorerColumns(dims: ReportDimension[]): FigureColumn<ReportRow>[] {
  return [
    ...dims.map((d): FigureColumn<ReportRow> => ({
      id: d,
      header: DIMENSION_LABELS[d],
      kind: 'text',
      value: (r) => rowLabel(r, d),
      wrap: true,
    })),
    { id: 'calls', header: 'Calls', kind: 'count', value: (r) => r.calls },
    { id: 'errors', header: 'Errors', kind: 'count', value: (r) => r.errors },
    { id: 'outputTokens', header: 'Output tokens', kind: 'count', value: (r) => r.outputTokens },
    { id: 'costMicros', header: 'Cost', kind: 'money', value: (r) => r.costMicros },
  ];
}
