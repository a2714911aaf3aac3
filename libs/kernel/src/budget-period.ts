import { DateTime } from 'luxon';

/** The calendar periods a budget runs over (TOTAL: never resets). */
export const BUDGET_PERIODS = ['DAY', 'WEEK', 'MONTH', 'QUARTER', 'TOTAL'] as const;
export type PeriodKind = (typeof BUDGET_PERIODS)[number];

/** HARD refuses a call the budget cannot pay; SOFT only alerts. */
export const BUDGET_MODES = ['HARD', 'SOFT'] as const;

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
  const change = ZONE_CHANGE.exec(timeZone);
  if (change) return periodWindowAcrossChange(kind, at, change[1], change[2], new Date(Number(change[3])));
  return zonePeriodWindow(kind, at, timeZone);
}

// `<previous>><current>@<epoch ms>`: an org's zone after a change (see budgetClock).
const ZONE_CHANGE = /^([^>@]+)>([^>@]+)@(\d+)$/;

/**
 * The zone string budgets use for an organisation whose zone changed at `changedAt`: the periods
 * running at the change keep the previous zone's bounds; the next one starts where they end and
 * ends on the new zone's calendar. Without a change it is the zone itself.
 */
export function budgetClock(timeZone: string, previousTimeZone?: string | null, changedAt?: Date | null): string {
  if (!previousTimeZone || !changedAt || previousTimeZone === timeZone) return timeZone;
  return `${previousTimeZone}>${timeZone}@${changedAt.getTime()}`;
}

/** The zone a budget clock ends in (what reports and views show). */
export function currentZoneOf(clock: string): string {
  return ZONE_CHANGE.exec(clock)?.[2] ?? clock;
}

function periodWindowAcrossChange(
  kind: Exclude<PeriodKind, 'TOTAL'>,
  at: Date,
  previous: string,
  current: string,
  changedAt: Date,
): PeriodWindow {
  const running = zonePeriodWindow(kind, changedAt, previous);
  if (running.end && at < running.end) return zonePeriodWindow(kind, at, previous);
  const next = zonePeriodWindow(kind, at, current);
  // The first period after the change starts where the running one ended, never inside it.
  if (running.end && next.start < running.end) return { start: running.end, end: next.end };
  return next;
}

function zonePeriodWindow(kind: Exclude<PeriodKind, 'TOTAL'>, at: Date, timeZone: string): PeriodWindow {
  const local = DateTime.fromJSDate(at, { zone: timeZone });
  if (!local.isValid) throw new RangeError(`invalid time zone: ${timeZone}`);
  const unit = ({ DAY: 'day', WEEK: 'week', MONTH: 'month', QUARTER: 'quarter' } as const)[kind];
  const start = local.startOf(unit);
  const end = start.plus({ [`${unit}s`]: 1 });
  return { start: start.toJSDate(), end: end.toJSDate() };
}
