import { Badge, Card, Group, Progress, Text, Title } from '@mantine/core';
import type { BudgetUtilisation } from '../api/admin-types';
import { Money } from '../components/money-text';
import { EmptyState, ErrorState, LoadingState } from '../components/page-states';
import { formatTimestamp } from '../lib/dates';
import { forecastBudget } from '../lib/forecast';
import { toMicros } from '../lib/money';
import { Ranked } from '../lib/spend-table';
import { Loaded } from '../lib/use-load';
import { useSession } from '../session';
import { FigureTable, type FigureColumn } from '../components/data-table';
import { periodLabel } from '../lib/labels';

export const SCOPE_LABELS: Record<BudgetUtilisation['scope'], string> = {
  ORG: 'Organisation',
  TEAM: 'Team',
  USER: 'User',
  KEY: 'Key',
};

export function BudgetRow({
  budget: b,
  name,
  refusedNow,
}: {
  budget: BudgetUtilisation;
  name: string;
  refusedNow: number;
}) {
  const { org } = useSession();
  const bp = b.utilisationBp ?? 0;
  const pct = Math.min(100, bp / 100);
  const color = bp >= 10000 ? 'red' : bp >= 8000 ? 'orange' : 'indigo';
  const f = forecastBudget({
    limitMicros: b.limitMicros,
    spentMicros: toMicros(b.spentMicros) + toMicros(b.reservedMicros),
    periodStart: b.periodStart,
    resetsAt: b.resetsAt,
  });
  const hard = b.mode === 'HARD';
  const reset = b.resetsAt ? formatTimestamp(b.resetsAt, org.timeZone) : null;
  // A hard budget refuses calls once used up; a soft one only alerts, and calls go on.
  // A hard budget refusing calls now is blocking, whatever a linear forecast of its spend says.
  const forecast =
    hard && refusedNow > 0 && f.kind !== 'exhausted'
      ? `Blocking now: ${refusedNow.toLocaleString()} ${refusedNow === 1 ? 'call' : 'calls'} refused in the last minutes, what is left cannot pay them${reset ? `; the period resets ${reset}` : ''}.`
      : f.kind === 'exhausted'
        ? hard
          ? `Hard limit reached: calls are refused ${reset ? `until the period resets (${reset})` : 'from now on'}.`
          : `Over its soft limit: calls go on, its alerts have fired${reset ? `; the period resets ${reset}` : ''}.`
        : f.kind === 'no-spend'
          ? 'No spend yet this period.'
          : f.kind === 'runs-out'
            ? hard
              ? `At this rate the budget runs out on ${formatTimestamp(f.at, org.timeZone)}; calls are refused from then.`
              : `At this rate it passes its soft limit on ${formatTimestamp(f.at, org.timeZone)} (calls go on).`
            : f.resetsAt
              ? `At this rate it lasts until the period resets (${formatTimestamp(f.resetsAt, org.timeZone)}).`
              : 'At this rate it lasts.';
  const label = `${SCOPE_LABELS[b.scope]} ${name}`;
  return (
    <div data-testid="budget-row">
      <Group justify="space-between" gap="xs" mb={4}>
        <Group gap="xs">
          <Text fw={600}>{label}</Text>
          <Badge size="sm" variant="outline" color="gray.8" c="var(--tg-strong)">
            {periodLabel(b.period)}
          </Badge>
          <Badge size="sm" variant="outline" color={b.mode === 'HARD' ? 'red.8' : 'yellow.8'} c="var(--tg-strong)">
            {b.mode === 'HARD' ? 'hard' : 'soft'}
          </Badge>
          {refusedNow > 0 && (
            <Badge size="sm" color="red.9" data-testid="budget-blocking">
              Blocking now
            </Badge>
          )}
        </Group>
        <Text size="sm">
          <Money micros={toMicros(b.spentMicros)} /> of <Money micros={b.limitMicros} /> ({(bp / 100).toFixed(2)} %)
        </Text>
      </Group>
      <Progress value={pct} color={color} aria-label={`${label}: ${(bp / 100).toFixed(2)} % of the budget used`} />
      <Text size="xs" c="dimmed" mt={4} data-testid="budget-forecast">
        {forecast}
      </Text>
    </div>
  );
}

/** Top lists: sortable, figures at the tables' one precision (the exact amount on hover). */
const TOP_COLUMNS: FigureColumn<Ranked>[] = [
  { id: 'label', header: 'Name', kind: 'text', value: (r) => r.label, wrap: true },
  { id: 'calls', header: 'Calls', kind: 'count', value: (r) => r.calls },
  { id: 'cost', header: 'Spend', kind: 'money', value: (r) => r.costMicros },
];

export function TopList({
  title,
  rows: loaded,
  testId,
}: {
  title: string;
  rows: Loaded<Ranked[] | null> & { reload: () => void };
  testId: string;
}) {
  const rows = loaded.state === 'ready' ? (loaded.data ?? []) : [];
  return (
    <Card withBorder component="section" aria-label={title} data-testid={testId}>
      <Title order={2} size="h5" mb="xs">
        {title}
      </Title>
      {loaded.state === 'loading' ? (
        <LoadingState label={`Loading ${title.toLowerCase()}…`} />
      ) : loaded.state === 'error' ? (
        <ErrorState error={loaded.error} what={title.toLowerCase()} onRetry={loaded.reload} />
      ) : rows.length === 0 ? (
        <EmptyState title="No calls this month yet" />
      ) : (
        <FigureTable label={title} columns={TOP_COLUMNS} rows={rows} rowKey={(r) => r.label} />
      )}
    </Card>
  );
}
