import { addDays, isDay, monthStart } from './dates';

/** The range picker's presets, as calendar days of the org's zone (inclusive). */
export const RANGE_PRESETS = [
  { id: 'today', label: 'Today' },
  { id: 'yesterday', label: 'Yesterday' },
  { id: 'this-month', label: 'This month' },
  { id: 'last-month', label: 'Last month' },
  { id: 'last-7', label: 'Last 7 days' },
  { id: 'last-30', label: 'Last 30 days' },
  { id: 'quarter-to-date', label: 'Quarter to date' },
] as const;
export type RangePreset = (typeof RANGE_PRESETS)[number]['id'];

export interface DayRange {
  from: string;
  to: string;
}

/** What Overview and the explorer open on: the month to date, the period most budgets run over. */
export const DEFAULT_PRESET: RangePreset = 'this-month';

/** A preset's days, `today` being the org's calendar day now. */
export function presetRange(preset: RangePreset, today: string): DayRange {
  switch (preset) {
    case 'today':
      return { from: today, to: today };
    case 'yesterday': {
      const y = addDays(today, -1);
      return { from: y, to: y };
    }
    case 'this-month':
      return { from: monthStart(today), to: today };
    case 'last-month': {
      const end = addDays(monthStart(today), -1);
      return { from: monthStart(end), to: end };
    }
    case 'last-7':
      return { from: addDays(today, -6), to: today };
    case 'last-30':
      return { from: addDays(today, -29), to: today };
    case 'quarter-to-date': {
      const month = Number(today.slice(5, 7));
      const first = String(month - ((month - 1) % 3)).padStart(2, '0');
      return { from: `${today.slice(0, 4)}-${first}-01`, to: today };
    }
  }
}

/** The preset a range is, if any (so a link to "this month" shows as such). */
export function presetOf(range: DayRange, today: string): RangePreset | null {
  return (
    RANGE_PRESETS.find((p) => {
      const r = presetRange(p.id, today);
      return r.from === range.from && r.to === range.to;
    })?.id ?? null
  );
}

/** The same number of days just before: what a range is compared with. */
export function previousPeriod(range: DayRange): DayRange {
  const days = Math.round((Date.parse(`${range.to}T00:00:00Z`) - Date.parse(`${range.from}T00:00:00Z`)) / 86_400_000);
  const to = addDays(range.from, -1);
  return { from: addDays(to, -days), to };
}

/**
 * A day a person finished typing: `YYYY-MM-DD`, a real date, in a sane span. A date input holds
 * `0002-10-27` while the year is being typed; that is never sent.
 */
export function isTypedDay(value: string): boolean {
  return (
    isDay(value) &&
    value >= '2000-01-01' &&
    value <= '2099-12-31' &&
    new Date(`${value}T00:00:00Z`).toISOString().slice(0, 10) === value // not 30 February
  );
}
