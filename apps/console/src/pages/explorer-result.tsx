import { Button, Card, Group, Text, Title } from '@mantine/core';
import { useMemo } from 'react';
import { ReportDimension, ReportRow, SpendReport } from '../api/admin-types';
import { FigureTable, type FigureColumn } from '../components/data-table';
import { Money } from '../components/money-text';
import { EmptyState } from '../components/page-states';
import { SpendPerDayChart } from '../components/spend-chart';
import { DIMENSION_LABELS, dimensionLabel, rowsCost } from '../lib/spend-table';

export function ExplorerResult({
  report,
  dims,
  currency,
  filtered,
  onClearFilters,
}: {
  report: SpendReport;
  dims: ReportDimension[];
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
  const consistent = useMemo(
    () => dims.includes('tag') || rowsCost(report) === BigInt(report.totals.costMicros),
    [report, dims],
  );
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
            <Text c="var(--tg-danger)" size="sm" role="alert">
              The rows do not add up to the report’s total.
            </Text>
          )}
        </Group>
        <FigureTable
          key={dims.join()}
          label="Spend table"
          testId="explorer-table"
          rowTestId="explorer-row"
          columns={explorerColumns(dims)}
          rows={report.rows}
          rowKey={(_, i) => String(i)}
          total={{ ...report.totals }}
          // Two or more breakdowns: a subtotal per value of the first (a team's days, a user's tools…).
          groups={dims.length > 1 ? { column: dims[0], of: (r) => dimensionLabel(r, dims[0]) } : undefined}
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
      value: (r) => dimensionLabel(r, d),
      wrap: true,
    })),
    { id: 'calls', header: 'Calls', kind: 'count', value: (r) => r.calls },
    { id: 'errors', header: 'Errors', kind: 'count', value: (r) => r.errors },
    { id: 'outputTokens', header: 'Output tokens', kind: 'count', value: (r) => r.outputTokens },
    { id: 'costMicros', header: 'Cost', kind: 'money', value: (r) => r.costMicros },
  ];
}
