import { DateTime } from 'luxon';

export type PeriodKind = 'DAY' | 'WEEK' | 'MONTH' | 'QUARTER' | 'TOTAL';

export interface PeriodWindow {
  /** Inclusive start; epoch for TOTAL. */
  start: Date;
  /** Exclusive end; null for TOTAL (never resets). */
  end: Date | null;
}

const TOTAL_START = new Date(0);

/**
 * The calendar period containing `at`, aligned in the organisation's IANA time zone (weeks start
 * on Monday, ISO). Daylight-saving days are 23 or 25 hours long, as the calendar says.
 */
export function periodWindow(kind: PeriodKind, at: Date, timeZone: string): PeriodWindow {
  if (kind === 'TOTAL') return { start: TOTAL_START, end: null };
  const local = DateTime.fromJSDate(at, { zone: timeZone });
  if (!local.isValid) throw new RangeError(`invalid time zone: ${timeZone}`);
  const unit = ({ DAY: 'day', WEEK: 'week', MONTH: 'month', QUARTER: 'quarter' } as const)[kind];
  const start = local.startOf(unit);
  const end = start.plus({ [`${unit}s`]: 1 });
  return { start: start.toJSDate(), end: end.toJSDate() };
}

export function isValidTimeZone(zone: string): boolean {
  return DateTime.now().setZone(zone).isValid;
}
