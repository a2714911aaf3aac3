import { useMemo } from 'react';
import { Bar, BarChart, CartesianGrid, Legend, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import { formatMoney, microsToChartUnits, toMicros } from '../lib/money';

// Colour-blind-safe palette (Okabe–Ito), dark enough on white.
const PALETTE = ['#0072B2', '#D55E00', '#009E73', '#CC79A7', '#E69F00', '#56B4E9', '#7a5c00', '#000000'];

interface Series {
  key: string;
  label: string;
}

/**
 * Spend per day by series: labels biggest first, and each day's cost per series (micro-units, same order):
 * a report's `perDay`, which the API sums from every row of a report it pages (the seven biggest series
 * by cost and the rest as "Other", every day of the range).
 */
export interface PerDay {
  series: string[];
  days: { day: string; costMicros: (bigint | number | string)[] }[];
}

/**
 * Spend per day stacked by one dimension. Bar heights are floats (geometry only); every figure
 * the tooltip shows is formatted from the row's micro-units. The table beside it is the
 * accessible, exact reading of the same numbers.
 */
export function SpendPerDayChart({ perDay, currency, title }: { perDay: PerDay; currency: string; title: string }) {
  // Converted to chart units once per answer, not on every render (the page re-renders as its filter choices arrive).
  const { series, data } = useMemo(() => {
    const series: Series[] = perDay.series.map((label, i) => ({ key: `s${i}`, label }));
    const data = perDay.days.map(({ day, costMicros }) => {
      const point: Record<string, number | string> = { day };
      costMicros.forEach((c, i) => {
        const m = toMicros(c);
        if (m === 0n) return;
        point[`s${i}`] = microsToChartUnits(m);
        point[`s${i}__micros`] = m.toString();
      });
      return point;
    });
    return { series, data };
  }, [perDay]);

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
