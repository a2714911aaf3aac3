import { Text } from '@mantine/core';
import { type SpendQuery, spendReport } from '../api/spend-report';
import { type DayRange, previousPeriod } from '../lib/date-ranges';
import { formatDay } from '../lib/dates';
import { formatChange, formatCount, formatMoney, formatRatio, toMicros } from '../lib/money';
import { useLoad } from '../lib/use-load';
import { useSession } from '../session';

/** `+3.0 %` / `−3.0 %` of a count against the previous period's, or null when that had none. */
function countChange(now: number, before: number): string | null {
  if (before === 0) return null;
  const ratio = formatRatio(BigInt(Math.abs(now - before)), BigInt(before));
  return `${now >= before ? '+' : '−'}${ratio}`;
}

/**
 * The range's spend and calls against the same number of days just before it, with the same filters: the
 * totals of one more report (no breakdown), compared in BigInt. The range picker's range is the only input;
 * the Overview and the explorer both show it.
 */
export function PreviousPeriod({
  range,
  filters,
  current,
  testId,
  size = 'sm',
}: {
  range: DayRange;
  /** The report's filters (teamId, keyId, tag…), without from, to and groupBy. */
  filters: Omit<SpendQuery, 'from' | 'to' | 'groupBy'>;
  current: { costMicros: string | number; calls: number } | null;
  testId: string;
  size?: 'xs' | 'sm';
}) {
  const { org, currency } = useSession();
  const previous = previousPeriod(range);
  const key = JSON.stringify(filters);
  const loaded = useLoad(
    () => spendReport(org.id, { ...filters, from: previous.from, to: previous.to }),
    [org.id, previous.from, previous.to, key],
  );
  const span = `${formatDay(previous.from)} – ${formatDay(previous.to)}`;
  return (
    // A div at normal weight: it also sits inside a bold figure's paragraph (the Overview's KPI).
    <Text
      size={size}
      c="dimmed"
      component="div"
      fw={400}
      data-testid={testId}
      data-previous-from={previous.from}
      data-previous-to={previous.to}
    >
      {loaded.state === 'error'
        ? 'The previous period could not be loaded.'
        : loaded.state === 'loading' || !current
          ? 'Comparing with the previous period…'
          : (() => {
              const before = loaded.data.totals;
              const calls = countChange(current.calls, before.calls);
              return (
                <>
                  <span data-testid={`${testId}-change`} data-micros={String(toMicros(before.costMicros))}>
                    {formatChange(current.costMicros, before.costMicros)}
                  </span>{' '}
                  vs {span} ({formatMoney(before.costMicros, currency)}, {formatCount(before.calls)}{' '}
                  {before.calls === 1 ? 'call' : 'calls'}
                  {calls ? `; calls ${calls}` : ''})
                </>
              );
            })()}
    </Text>
  );
}
