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
  const totals = new Map<string, bigint>();
  for (const r of report.rows) {
    const label = stackBy ? dimensionLabel(r, stackBy) : 'Spend';
    totals.set(label, (totals.get(label) ?? 0n) + toMicros(r.costMicros as number | string));
  }
  const ranked = [...totals.entries()].sort((a, b) => (b[1] > a[1] ? 1 : b[1] < a[1] ? -1 : 0)).map(([label]) => label);
  const kept = new Set(ranked.slice(0, MAX_SERIES - 1));
  const labelOf = (l: string) => (ranked.length <= MAX_SERIES || kept.has(l) ? l : 'Other');
  const series: Series[] = [...new Set(ranked.map(labelOf))].map((label, i) => ({ key: `s${i}`, label }));
  const keyOf = new Map(series.map((s) => [s.label, s.key]));

  const byDay = new Map<string, Record<string, number | string>>();
  for (const day of daysBetween(report.from, report.to)) byDay.set(day, { day });
  const micros = new Map<string, bigint>();
  for (const r of report.rows) {
    const day = String(r.day);
    const key = keyOf.get(labelOf(stackBy ? dimensionLabel(r, stackBy) : 'Spend'))!;
    const m = (micros.get(`${day}|${key}`) ?? 0n) + toMicros(r.costMicros as number | string);
    micros.set(`${day}|${key}`, m);
    const point = byDay.get(day) ?? { day };
    point[key] = microsToChartUnits(m);
    point[`${key}__micros`] = m.toString();
    byDay.set(day, point);
  }
  const data = [...byDay.values()];

  return (
    <figure style={{ margin: 0 }} aria-label={title}>
      <div style={{ width: '100%', height: 280 }}>
        <ResponsiveContainer>
          <BarChart data={data} margin={{ top: 8, right: 8, bottom: 8, left: 8 }}>
            <CartesianGrid strokeDasharray="3 3" vertical={false} />
            <XAxis dataKey="day" tickFormatter={(d: string) => d.slice(5)} tick={{ fill: '#333' }} />
            <YAxis
              tickFormatter={(v: number) => formatMoney(BigInt(Math.round(v * 1_000_000)), currency)}
              width={80}
              tick={{ fill: '#333' }}
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
