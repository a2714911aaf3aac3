import { Prisma } from '@tollgate/db';
import { DateTime } from 'luxon';
import type { PoolClient } from 'pg';
import type { DayRange } from './report-dates';

/**
 * A rollup with rows per longer periods besides its day rows: the day table (unquoted), its month
 * table, its dekad table if it has one (days 1-10, 11-20, 21 to the month's end, keyed by their
 * first day), and the columns their rows share.
 */
export interface MonthlyRollup {
  days: string;
  months: string;
  dekads?: string;
  columns: string;
}

/** The periods a rollup's rows are kept by, longest first; each nests exactly in the one before. */
export type CoverLevel = 'month' | 'dekad' | 'day';

/** Rows of one level: months or dekads by their first days, days as ranges [from, to]. */
export interface CoverRows {
  months: string[];
  dekads: string[];
  days: [string, string][];
}

/**
 * Where a range's sums are read from: rows added, and rows subtracted (a period read whole less
 * its rows outside the range). Subtracted rows are always outside the range; added ones may be too,
 * where a subtracted dekad took days of the range with it.
 */
export interface RangeCover {
  plus: CoverRows;
  minus: CoverRows;
}

type ReportClient = Pick<PoolClient, 'query'>;
type Days = [string, string];

const utcDay = (day: string) => DateTime.fromISO(day, { zone: 'UTC' });
const isoDay = (d: DateTime) => d.toISODate() as string;
const dayBefore = (day: string) => isoDay(utcDay(day).minus({ days: 1 }));
const dayAfter = (day: string) => isoDay(utcDay(day).plus({ days: 1 }));
/** Calendar days from `from` to `to`, both included. */
const daysIn = ([from, to]: Days) => utcDay(to).diff(utcDay(from), 'days').days + 1;

/** The first day of the dekad holding `d` (the 1st, 11th or 21st), as the insert trigger keys it. */
export function dekadOf(day: string): string {
  const d = utcDay(day);
  return isoDay(d.set({ day: Math.min(Math.floor((d.day - 1) / 10), 2) * 10 + 1 }));
}

/** The periods of a level overlapping `[from, to]`, each as [first day, last day]. */
function periodsOf(level: 'month' | 'dekad', [from, to]: Days): Days[] {
  const out: Days[] = [];
  let start = utcDay(level === 'month' ? isoDay(utcDay(from).startOf('month')) : dekadOf(from));
  while (isoDay(start) <= to) {
    const monthEnd = start.endOf('month').startOf('day');
    const end = level === 'month' || start.day === 21 ? monthEnd : start.plus({ days: 9 });
    out.push([isoDay(start), isoDay(end)]);
    start = end.plus({ days: 1 });
  }
  return out;
}

/**
 * How many days of day rows one period's rows weigh, by the planner's row estimates of the tables
 * (30 x month rows / day rows, 10 x dekad rows / day rows): at 10M ledger rows the per-key-and-tool
 * month rows weigh ~8 days, its dekad rows ~4-5, the tool-by-tag month rows ~1. 0 before ANALYZE
 * has counted them (then a period's rows are taken as free, and the fewest day rows win).
 */
async function levelWeights(client: ReportClient, rollup: MonthlyRollup): Promise<Record<CoverLevel, number>> {
  const { rows } = await client.query<{ months: number; dekads: number | null; days: number }>(
    `SELECT (SELECT reltuples FROM pg_class WHERE oid = $1::regclass) AS months,
            (SELECT reltuples FROM pg_class WHERE oid = $2::regclass) AS dekads,
            (SELECT reltuples FROM pg_class WHERE oid = $3::regclass) AS days`,
    [`"${rollup.months}"`, rollup.dekads ? `"${rollup.dekads}"` : null, `"${rollup.days}"`],
  );
  const { months, dekads, days } = rows[0];
  const weigh = (n: number | null, periodDays: number) => (n && n > 0 && days > 0 ? (periodDays * n) / days : 0);
  return { month: weigh(months, 30), dekad: weigh(dekads, 10), day: 1 };
}

/**
 * Where a rollup's range is read from, as a nested cover: the months it holds whole from the month
 * rows, then in an edge month the dekads it holds whole from the dekad rows, then the rest from the
 * day rows. A period the range holds only in part is read, if that reads fewer rows, as the whole
 * period less its part outside the range (covered the same way one level down, negated), and whole
 * when it has no calls outside the range (one index probe of the day rows per part left out). So
 * the last 30 days read at most about a dekad's rows and a few days of day rows per edge month on
 * any date, where months alone read up to 19 days of day rows on the 11th. Exported for its test.
 */
export async function rangeCover(
  client: ReportClient,
  rollup: MonthlyRollup,
  orgId: string,
  range: Pick<DayRange, 'from' | 'to'>,
): Promise<RangeCover> {
  const probed = new Map<string, boolean>();
  const hasCalls = async ([from, to]: Days) => {
    const key = `${from}/${to}`;
    if (!probed.has(key)) {
      const { rows } = await client.query<{ found: boolean }>(
        `SELECT EXISTS (SELECT 1 FROM "${rollup.days}" WHERE "orgId" = $1::uuid AND "day" BETWEEN $2::date AND $3::date) AS found`,
        [orgId, from, to],
      );
      probed.set(key, rows[0].found);
    }
    return probed.get(key) as boolean;
  };
  const levels: CoverLevel[] = rollup.dekads ? ['month', 'dekad', 'day'] : ['month', 'day'];
  let weights: Record<CoverLevel, number> | undefined;
  type Part = { level: CoverLevel; sign: 1 | -1; days: Days };
  type Cover = { cost: number; parts: Part[] };

  // `days` within one period of the level above `level` (any span at the top).
  const cover = async (level: number, days: Days, sign: 1 | -1): Promise<Cover> => {
    const name = levels[level];
    if (name === 'day') return { cost: daysIn(days), parts: [{ level: 'day', sign, days }] };
    const out: Cover = { cost: 0, parts: [] };
    for (const period of periodsOf(name, days)) {
      const part: Days = [days[0] > period[0] ? days[0] : period[0], days[1] < period[1] ? days[1] : period[1]];
      const whole: Part = { level: name, sign, days: period };
      const leftOut = (
        [
          [period[0], dayBefore(part[0])],
          [dayAfter(part[1]), period[1]],
        ] as Days[]
      ).filter(([from, to]) => from <= to);
      const withCalls: Days[] = [];
      for (const d of leftOut) if (await hasCalls(d)) withCalls.push(d);
      weights ??= await levelWeights(client, rollup);
      let best: Cover;
      if (withCalls.length === 0) {
        // The period's rows are the part's: no more than its day rows, nor than a full period's.
        best = { cost: Math.min(weights[name], daysIn(part)), parts: [whole] };
      } else {
        best = await cover(level + 1, part, sign);
        const less: Cover = { cost: weights[name], parts: [whole] };
        for (const d of withCalls) {
          const c = await cover(level + 1, d, sign === 1 ? -1 : 1);
          less.cost += c.cost;
          less.parts.push(...c.parts);
        }
        if (less.cost < best.cost) best = less;
      }
      out.cost += best.cost;
      out.parts.push(...best.parts);
    }
    return out;
  };

  const { parts } = await cover(0, [range.from, range.to], 1);
  const result: RangeCover = {
    plus: { months: [], dekads: [], days: [] },
    minus: { months: [], dekads: [], days: [] },
  };
  for (const p of parts) {
    const rows = p.sign === 1 ? result.plus : result.minus;
    if (p.level === 'month') rows.months.push(p.days[0]);
    else if (p.level === 'dekad') rows.dekads.push(p.days[0]);
    else {
      // Day ranges that meet (split at a dekad's end) read as one.
      const last = rows.days.at(-1);
      if (last && dayAfter(last[1]) === p.days[0]) last[1] = p.days[1];
      else rows.days.push([...p.days]);
    }
  }
  return result;
}

/** Whether a cover subtracts anything (a group may then sum to no calls). */
export const coverSubtracts = (c: RangeCover) =>
  c.minus.months.length + c.minus.dekads.length + c.minus.days.length > 0;

/**
 * A rollup's rows of a range, with the day rows' columns: the cover's rows, subtracted ones with
 * their figures negated (so a group of only those days sums to no calls). Every row's "day" is the
 * range's first: the report's range filter on "day" holds for each, and the planner folds it away
 * (on `GREATEST("month", from)` it guessed 0.5% of the month rows would pass, 400 rows for 197k, and
 * planned the aggregate for as few: users by tool over 30 days at 10M ledger rows about 15% slower).
 */
export function coverRows(rollup: MonthlyRollup, orgId: string, range: DayRange, cover: RangeCover): Prisma.Sql {
  const parts: Prisma.Sql[] = [];
  for (const [rows, sign] of [
    [cover.plus, ''],
    [cover.minus, '-'],
  ] as const) {
    const columns = Prisma.raw(
      `${rollup.columns}, ${['calls', 'errors', 'outputTokens', 'costMicros'].map((f) => `${sign}"${f}" AS "${f}"`).join(', ')}`,
    );
    const select = (table: string, where: Prisma.Sql) =>
      Prisma.sql`SELECT "orgId", ${range.from}::date AS "day", ${columns}
        FROM ${Prisma.raw(`"${table}"`)} WHERE "orgId" = ${orgId}::uuid AND ${where}`;
    if (rows.months.length > 0) parts.push(select(rollup.months, Prisma.sql`"month" = ANY(${rows.months}::date[])`));
    if (rows.dekads.length > 0)
      parts.push(select(rollup.dekads as string, Prisma.sql`"dekad" = ANY(${rows.dekads}::date[])`));
    for (const [from, to] of rows.days)
      parts.push(select(rollup.days, Prisma.sql`"day" BETWEEN ${from}::date AND ${to}::date`));
  }
  return Prisma.sql`(${Prisma.join(parts, ' UNION ALL ')})`;
}
