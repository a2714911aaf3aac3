import { useMemo } from 'react';
import { Bar, BarChart, CartesianGrid, Legend, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import type { ReportDimension, SpendReport } from '../api/admin-types';
import { daysBetween } from '../lib/dates';
import { formatMoney, microsToChartUnits, toMicros } from '../lib/money';
import { dimensionLabel } from '../lib/spend-table';

// Colour-blind-safe palette (Okabe–Ito), dark enough on white.
const PALETTE = ['#0072B2', '#D55E00', '#009E73', '#CC79A7', '#E69F00', '#56B4E9', '#7a5c00', '#000000'];
const MAX_SERIES = 8;

interface Series {
  key: string;
  label: string;
}

/**
 * Spend per day stacked by one dimension. Bar heights are floats (geometry only); every figure
 * the tooltip shows is formatted from the row's micro-units. The table beside it is the
 * accessible, exact reading of the same numbers.
 */
export function SpendPerDayChart({
  report,
  stackBy,
  currency,
  title,
}: {
  report: SpendReport;
  stackBy: ReportDimension | null;
  currency: string;
  title: string;
}) {
  // Tens of thousands of rows (keys by day): computed once per report, not on every render
  // (the page re-renders as its filter choices arrive).
  const { series, data } = useMemo(() => {
    const labels = report.rows.map((r) => (stackBy ? dimensionLabel(r, stackBy) : 'Spend'));
    const costs = report.rows.map((r) => toMicros(r.costMicros as number | string));
    const totals = new Map<string, bigint>();
    labels.forEach((label, i) => totals.set(label, (totals.get(label) ?? 0n) + costs[i]));
    const ranked = [...totals.entries()]
      .sort((a, b) => (b[1] > a[1] ? 1 : b[1] < a[1] ? -1 : 0))
      .map(([label]) => label);
    const kept = new Set(ranked.slice(0, MAX_SERIES - 1));
    const labelOf = (l: string) => (ranked.length <= MAX_SERIES || kept.has(l) ? l : 'Other');
    const series: Series[] = [...new Set(ranked.map(labelOf))].map((label, i) => ({ key: `s${i}`, label }));
    const keyOf = new Map(series.map((s) => [s.label, s.key]));

    // Summed per day and series first, converted to chart units once per bar.
    const byDay = new Map<string, Map<string, bigint>>();
    for (const day of daysBetween(report.from, report.to)) byDay.set(day, new Map());
    report.rows.forEach((r, i) => {
      const day = String(r.day);
      const key = keyOf.get(labelOf(labels[i]))!;
      const sums = byDay.get(day) ?? new Map<string, bigint>();
      sums.set(key, (sums.get(key) ?? 0n) + costs[i]);
      byDay.set(day, sums);
    });
    const data = [...byDay.entries()].map(([day, sums]) => {
      const point: Record<string, number | string> = { day };
      for (const [key, m] of sums) {
        point[key] = microsToChartUnits(m);
        point[`${key}__micros`] = m.toString();
      }
      return point;
    });
    return { series, data };
  }, [report, stackBy]);

  return (
    <figure style={{ margin: 0 }} aria-label={title}>
      <div style={{ width: '100%', height: 280 }}>
        <ResponsiveContainer>
          <BarChart data={data} margin={{ top: 8, right: 8, bottom: 8, left: 8 }}>
            <CartesianGrid strokeDasharray="3 3" vertical={false} />
            <XAxis dataKey="day" tickFormatter={(d: string) => d.slice(5)} tick={{ fill: 'var(--tg-strong)' }} />
            <YAxis
              tickFormatter={(v: number) => formatMoney(BigInt(Math.round(v * 1_000_000)), currency)}
              width={80}
              tick={{ fill: 'var(--tg-strong)' }}
            />
            <Tooltip
              formatter={(_v, name, item) => {
                const key = String(item.dataKey);
                const exact = (item.payload as Record<string, string>)[`${key}__micros`] ?? '0';
                return [formatMoney(exact, currency), name];
              }}
            />
            {series.length > 1 && <Legend />}
            {series.map((s, i) => (
              <Bar
                key={s.key}
                dataKey={s.key}
                name={s.label}
                stackId="spend"
                fill={PALETTE[i % PALETTE.length]}
                isAnimationActive={false}
              />
            ))}
          </BarChart>
        </ResponsiveContainer>
      </div>
      <figcaption style={{ position: 'absolute', width: 1, height: 1, overflow: 'hidden', clip: 'rect(0 0 0 0)' }}>
        {title}
      </figcaption>
    </figure>
  );
}
