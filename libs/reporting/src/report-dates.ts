import { ReportingException, ReportingExceptionCode } from './reporting.exception';

const DAY_MS = 24 * 3600 * 1000;
const ISO_DAY = /^(\d{4})-(\d{2})-(\d{2})$/;
/** About three years: a wider range is a data export, not a report. */
export const MAX_REPORT_DAYS = 1096;

/** A UTC calendar day `YYYY-MM-DD` as its midnight, or null if it is not a real date. */
export function parseUtcDay(value: string): Date | null {
  const m = ISO_DAY.exec(value);
  if (!m) return null;
  const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  return d.toISOString().slice(0, 10) === value ? d : null;
}

export function formatUtcDay(d: Date): string {
  return d.toISOString().slice(0, 10);
}

/** `[start, end)` of the UTC days `from` to `to`, both inclusive. */
export interface DayRange {
  from: string;
  to: string;
  start: Date;
  end: Date;
}

export function dayRange(from: string, to: string): DayRange {
  const start = parseUtcDay(from);
  if (!start)
    throw new ReportingException(ReportingExceptionCode.InvalidQuery, 'from must be a date YYYY-MM-DD', 'from');
  const last = parseUtcDay(to);
  if (!last) throw new ReportingException(ReportingExceptionCode.InvalidQuery, 'to must be a date YYYY-MM-DD', 'to');
  if (last < start)
    throw new ReportingException(ReportingExceptionCode.InvalidQuery, 'to must not be before from', 'to');
  const days = (last.getTime() - start.getTime()) / DAY_MS + 1;
  if (days > MAX_REPORT_DAYS)
    throw new ReportingException(
      ReportingExceptionCode.InvalidQuery,
      `the range may span at most ${MAX_REPORT_DAYS} days`,
      'to',
    );
  return { from, to, start, end: new Date(last.getTime() + DAY_MS) };
}

/** The UTC day containing `at`, and the one before it (the rollup schedule recomputes both). */
export function todayAndYesterday(at: Date): string[] {
  const today = formatUtcDay(at);
  return [formatUtcDay(new Date(at.getTime() - DAY_MS)), today];
}
