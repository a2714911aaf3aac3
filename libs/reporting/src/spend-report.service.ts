import { Injectable } from '@nestjs/common';
import { Prisma, PrismaService } from '@tollgate/db';
import { DateTime } from 'luxon';
import type { PoolClient } from 'pg';
import { coverRows, coverSubtracts, MonthlyRollup, RangeCover, rangeCover } from './range-cover';
import { DayRange, dayRange } from './report-dates';
import { ReportingException, ReportingExceptionCode } from './reporting.exception';
import type { ReportPage, ReportSort } from './spend-report-page';
import {
  ID_FILTERS,
  ORG_SCOPE,
  REPORT_METRICS,
  ReportDimension,
  ReportScope,
  SpendFigures,
  SpendFilters,
  SpendRemainder,
  SpendReport,
  SpendRow,
  addFigures,
  noFilters,
  reportColumns,
  scopeFilters,
  zeroFigures,
} from './spend-report';

/** More rows than this is an export, not a report: narrow the range or the breakdown. */
export const MAX_REPORT_ROWS = 50_000;

// Ledger timestamps are UTC (timestamp without time zone): this is the calendar day in `zoneSql`.
const localDay = (zoneSql: string) => `((e."occurredAt" AT TIME ZONE 'UTC') AT TIME ZONE ${zoneSql})::date`;

// Whitelisted SQL for each dimension: what to group by, and how to name the result. `daySql` is
// the row's calendar day in the org's zone (computed for a ledger row, stored in a rollup row).
const dimensionSql = (daySql: string): Record<ReportDimension, { select: string[]; groupBy: string[] }> => ({
  team: { select: ['e."teamId"'], groupBy: ['e."teamId"'] },
  user: { select: ['e."userId"'], groupBy: ['e."userId"'] },
  key: { select: ['e."keyId"'], groupBy: ['e."keyId"'] },
  upstream: { select: ['e."upstreamId"'], groupBy: ['e."upstreamId"'] },
  tool: { select: ['e."upstreamId"', 'e."toolName"'], groupBy: ['e."upstreamId"', 'e."toolName"'] },
  day: { select: [`to_char(${daySql}, 'YYYY-MM-DD') AS "day"`], groupBy: [daySql] },
  tag: { select: ['tg."tag"'], groupBy: ['tg."tag"'] },
});

/**
 * Where a report's rows come from. The ledger's insert trigger keeps three rollups by the org's
 * local day: per key with its team and user (migration 20261128090000_usage_report_rollups), per
 * tool (same), and per key, upstream and tool (20261203091500_usage_call_day_rollup). A report reads
 * the smallest one that holds its breakdown and filters (same sums, far fewer rows than the ledger);
 * the ledger only while the rollups are of another zone than the org's (until they are rebuilt).
 * A fourth, per tool and the key's tag set (20261230020000_usage_tool_tag_rollup), serves tools by
 * tag: tag sets instead of keys per tool and day. A fifth, the same per team
 * (20261231120000_usage_team_tool_tag_rollup), serves a team's reports across tools and tags: the
 * team's tools and tag sets instead of its keys. These two and the per-key-and-tool one also have
 * month rows (20261231100000, 20261231120000, 20270101010000_usage_call_month_rollup), read for the
 * whole months of a range without days, and the per-key-and-tool one dekad rows
 * (20270103010000_usage_call_dekad_rollup), read for the whole dekads of its edge months. A report of
 * that rollup without keys or tags (users or teams by tool, a user's tools) is `userCallDays`: the same
 * day rows, and month and dekad rows per user (20270104010000_usage_user_call_rollups), a user's keys
 * summed (~3x fewer rows).
 */
type ReportSource = 'ledger' | 'keyDays' | 'toolDays' | 'callDays' | 'userCallDays' | 'toolTagDays' | 'teamToolTagDays';
const KEY_DAY_DIMENSIONS: readonly ReportDimension[] = ['team', 'user', 'key', 'tag', 'day'];
const TOOL_DAY_DIMENSIONS: readonly ReportDimension[] = ['upstream', 'tool', 'day'];
const TOOL_TAG_DAY_DIMENSIONS: readonly ReportDimension[] = ['upstream', 'tool', 'tag', 'day'];
const TEAM_TOOL_TAG_DAY_DIMENSIONS: readonly ReportDimension[] = ['team', ...TOOL_TAG_DAY_DIMENSIONS];

export function reportSource(
  groupBy: readonly ReportDimension[],
  filters: Partial<SpendFilters>,
  rollupsCurrent: boolean,
): ReportSource {
  if (!rollupsCurrent) return 'ledger';
  const has = (f: keyof SpendFilters) => {
    const v = filters[f];
    return Array.isArray(v) ? v.length > 0 : Boolean(v);
  };
  const byKeys = has('teamId') || has('userId') || has('keyId');
  const byPeople = byKeys || has('tag');
  const byTools = has('upstreamId') || has('tool') || groupBy.includes('upstream') || groupBy.includes('tool');
  if (!byPeople && groupBy.every((d) => TOOL_DAY_DIMENSIONS.includes(d))) return 'toolDays';
  // Tools by tag; tags alone (or by day) stay on the key rollup, which has fewer rows for them.
  if (!byKeys && byTools && groupBy.every((d) => TOOL_TAG_DAY_DIMENSIONS.includes(d))) return 'toolTagDays';
  if (!byTools && groupBy.every((d) => KEY_DAY_DIMENSIONS.includes(d))) return 'keyDays';
  // Teams across tools: the team rows (each sums rows of the per-key-and-tool rollup, never more rows).
  if (!has('userId') && !has('keyId') && groupBy.every((d) => TEAM_TOOL_TAG_DAY_DIMENSIONS.includes(d)))
    return 'teamToolTagDays';
  // Without keys or tags, the per-user month and dekad rows hold what is read.
  if (!has('keyId') && !has('tag') && !groupBy.includes('key') && !groupBy.includes('tag')) return 'userCallDays';
  return 'callDays';
}

const ROLLUP_FIGURES = rollupFigures('e');
/** Table, figures and day column of each source (whitelisted SQL). */
const SOURCE_SQL: Record<ReportSource, { table: string; figures: string; day: (zoneSql: string) => string }> = {
  ledger: {
    table: '"UsageEvent"',
    figures: `COUNT(*)::bigint AS "calls",
               COUNT(*) FILTER (WHERE e."outcome" <> 'OK')::bigint AS "errors",
               COALESCE(SUM(e."outputTokens"), 0)::bigint AS "outputTokens",
               COALESCE(SUM(e."costMicros"), 0)::bigint AS "costMicros"`,
    day: localDay,
  },
  keyDays: { table: '"UsageKeyDayRollup"', figures: ROLLUP_FIGURES, day: () => 'e."day"' },
  toolDays: { table: '"UsageToolDayRollup"', figures: ROLLUP_FIGURES, day: () => 'e."day"' },
  callDays: { table: '"UsageCallDayRollup"', figures: ROLLUP_FIGURES, day: () => 'e."day"' },
  userCallDays: { table: '"UsageCallDayRollup"', figures: ROLLUP_FIGURES, day: () => 'e."day"' },
  toolTagDays: { table: '"UsageToolTagDayRollup"', figures: ROLLUP_FIGURES, day: () => 'e."day"' },
  teamToolTagDays: { table: '"UsageTeamToolTagDayRollup"', figures: ROLLUP_FIGURES, day: () => 'e."day"' },
};

/** Sources whose rows carry the key's tag set (`tags`) instead of the key. */
const TAGGED_SOURCES: readonly string[] = [SOURCE_SQL.toolTagDays.table, SOURCE_SQL.teamToolTagDays.table];

/**
 * Rollups with rows per month (and per dekad) besides their day rows. Only the per-key-and-tool one
 * has dekad rows: its month rows weigh ~8 days of day rows, so an edge month read from day rows cost
 * up to 19 days of them; the tool-by-tag month rows weigh about one day, so their edges cost little.
 */
export const MONTHLY_ROLLUPS: Partial<Record<ReportSource, MonthlyRollup>> = {
  callDays: {
    days: 'UsageCallDayRollup',
    months: 'UsageCallMonthRollup',
    dekads: 'UsageCallDekadRollup',
    columns: '"keyId", "teamId", "userId", "upstreamId", "toolName"',
  },
  // The same without the key: months and dekads per user, days from the per-key day rows.
  userCallDays: {
    days: 'UsageCallDayRollup',
    months: 'UsageUserCallMonthRollup',
    dekads: 'UsageUserCallDekadRollup',
    columns: '"teamId", "userId", "upstreamId", "toolName"',
  },
  toolTagDays: {
    days: 'UsageToolTagDayRollup',
    months: 'UsageToolTagMonthRollup',
    columns: '"upstreamId", "toolName", "tags"',
  },
  teamToolTagDays: {
    days: 'UsageTeamToolTagDayRollup',
    months: 'UsageTeamToolTagMonthRollup',
    columns: '"teamId", "upstreamId", "toolName", "tags"',
  },
};

type ReportClient = Pick<PoolClient, 'query'>;

// Rollup figures are summed in bigint (migration 20261231203000_report_int8_sum: 0 over no rows, an
// error past bigint), not by sum(bigint)'s numeric: a third less time over ~240k rows.
function rollupFigures(alias: string): string {
  return REPORT_METRICS.map((m) => `tollgate_sum_int8(${alias}."${m}") AS "${m}"`).join(', ');
}

/** Every row's count and sums (`over`: `OVER ()` beside each row, empty as an aggregate), as `allRows`, `allCalls`... */
function allFigures(alias: string, over: string): string {
  return [
    `count(*) ${over} AS "allRows"`,
    ...REPORT_METRICS.map((m) => `tollgate_sum_int8(${alias}."${m}") ${over} AS "all${capitalise(m)}"`),
  ].join(', ');
}

function allFiguresOf(r: RawRow): SpendFigures {
  return {
    calls: BigInt(r.allCalls!),
    errors: BigInt(r.allErrors!),
    outputTokens: BigInt(r.allOutputTokens!),
    costMicros: BigInt(r.allCostMicros!),
  };
}

const capitalise = (s: string) => `${s[0].toUpperCase()}${s.slice(1)}`;

// rowLabel's text(): names first, ids when a name is missing, '(none)' for nothing.
const labelText = (sql: string) => `COALESCE(NULLIF(${sql}, ''), '(none)')`;
/** rowLabel(row, dim) in SQL, over a report row `a` and its names (the lookups' aliases). */
function labelSql(dim: Exclude<ReportDimension, 'day'>): string {
  switch (dim) {
    case 'team':
      return labelText('COALESCE(t."name", a."teamId"::text)');
    case 'user':
      return labelText('COALESCE(u."email", a."userId"::text)');
    case 'key':
      return `CASE WHEN k."name" <> '' THEN k."name" || ' (' || COALESCE(k."prefix", '?') || ')' ELSE ${labelText('a."keyId"::text')} END`;
    case 'upstream':
      return labelText('COALESCE(s."namespace", a."upstreamId"::text)');
    case 'tool':
      return `${labelText('COALESCE(s."namespace", a."upstreamId"::text)')} || ' / ' || ${labelText('a."toolName"')}`;
    case 'tag':
      return `COALESCE(a."tag", '(untagged)')`;
  }
}

function reportTooLarge(): ReportingException {
  return new ReportingException(
    ReportingExceptionCode.ReportTooLarge,
    `the report has more than ${MAX_REPORT_ROWS} rows: narrow the date range or groupBy`,
    'groupBy',
  );
}

/** A report row from the driver's: its dimension columns (null where absent) and its figures. */
function spendRow(r: RawRow, dimensionColumns: readonly string[]): SpendRow {
  const row = {
    figures: {
      calls: BigInt(r.calls),
      errors: BigInt(r.errors),
      outputTokens: BigInt(r.outputTokens),
      costMicros: BigInt(r.costMicros),
    },
  } as SpendRow;
  for (const c of dimensionColumns) row[c] = (r as unknown as Record<string, string | null>)[c] ?? null;
  return row;
}

/**
 * Whether spendReportPage numbers a page in Postgres: with a breakdown, not by day (the chart's series
 * need every row), unsorted or sorted on a figure (names sort in the console's collation, in Node).
 */
function pagedInSql(groupBy: readonly ReportDimension[], sort: ReportSort | null): boolean {
  const onFigure = sort === null || (REPORT_METRICS as readonly string[]).includes(sort.column);
  return groupBy.length > 0 && !groupBy.includes('day') && onFigure;
}

/** What spendReport and spendReportPage build their statement from (reportPlan). */
interface ReportPlan {
  orgId: string;
  range: DayRange;
  timeZone: string;
  filters: SpendFilters;
  scope: ReportScope;
  groupBy: ReportDimension[];
  columns: string[];
  dimensionColumns: string[];
  /** Name columns and their joins on the aggregate's rows `a`. */
  names: string[];
  joins: string[];
  /** The joins of one dimension's names only (on rows `a` holding its columns). */
  joinsOf: (dim: ReportDimension) => string[];
  /** The report's order on a row alias (as sortRows orders it). */
  dimensionOrder: (alias: string) => string;
  /** The grouped sums (`cap`: a LIMIT or nothing), to be a CTE named `a`. */
  aggregate: (client: ReportClient, cap: Prisma.Sql) => Promise<Prisma.Sql>;
}

/**
 * The filters as `AND ...` conditions on the row alias `alias` (every source has the columns of the
 * filters it is chosen for); `tagged`: the rows carry the tag set, not the key.
 */
function filterSql(alias: string, f: SpendFilters, tagged = false): Prisma.Sql {
  const col = (c: string) => Prisma.raw(`${alias}."${c}"`);
  const parts: Prisma.Sql[] = [];
  for (const field of ID_FILTERS)
    if (f[field].length > 0) parts.push(Prisma.sql`AND ${col(field)} = ANY(${f[field]}::uuid[])`);
  if (f.tool.length > 0) parts.push(Prisma.sql`AND ${col('toolName')} = ANY(${f.tool}::text[])`);
  if (f.tag && tagged) parts.push(Prisma.sql`AND ${f.tag} = ANY(${col('tags')})`);
  else if (f.tag)
    parts.push(
      Prisma.sql`AND EXISTS (SELECT 1 FROM "VirtualKey" fk WHERE fk."id" = ${col('keyId')} AND ${f.tag} = ANY(fk."tags"))`,
    );
  return parts.length > 0 ? Prisma.join(parts, ' ') : Prisma.empty;
}

// The rollup column(s) each dimension groups by.
const ROLLUP_COLUMNS: Record<Exclude<ReportDimension, 'tag'>, string[]> = {
  team: ['teamId'],
  user: ['userId'],
  key: ['keyId'],
  upstream: ['upstreamId'],
  tool: ['upstreamId', 'toolName'],
  day: ['day'],
};

/**
 * Grouped by tag, a rollup is first summed per tag set (the key's tags now, joined per row) and the
 * other dimensions asked for, filtered and over the range; each tag set's tags are then unnested.
 * A few dozen tag sets make far fewer groups than keys, so the tags are joined once per group.
 */
function rollupPerTagSet(
  table: string,
  rows: Prisma.Sql,
  orgId: string,
  range: DayRange,
  groupBy: readonly ReportDimension[],
  filters: SpendFilters,
): Prisma.Sql {
  const columns = ['orgId'];
  for (const d of groupBy)
    if (d !== 'tag') for (const c of ROLLUP_COLUMNS[d]) if (!columns.includes(c)) columns.push(c);
  const list = columns.map((c) => `r."${c}"`).join(', ');
  const tagged = TAGGED_SOURCES.includes(table);
  // A tagged rollup has the tag set on its rows already; the others join their key's.
  const tags = tagged ? 'r."tags"' : 'tk."tags"';
  const join = tagged ? '' : 'LEFT JOIN "VirtualKey" tk ON tk."id" = r."keyId"';
  return Prisma.sql`(SELECT ${Prisma.raw(list)}, ${Prisma.raw(tags)} AS "tags", ${Prisma.raw(rollupFigures('r'))}
    FROM ${rows} r ${Prisma.raw(join)}
    WHERE r."orgId" = ${orgId}::uuid AND r."day" BETWEEN ${range.from}::date AND ${range.to}::date ${filterSql('r', filters, tagged)}
    GROUP BY ${Prisma.raw(list)}, ${Prisma.raw(tags)})`;
}

// Tags as rows (one NULL row for none): per ledger row, its key's tags; per tag set, its tags.
const unnestTags = (tags: string) =>
  `CROSS JOIN LATERAL unnest(CASE WHEN COALESCE(cardinality(${tags}), 0) = 0 THEN ARRAY[NULL]::text[] ELSE ${tags} END) AS tg("tag")`;
const LEDGER_TAG_JOIN = `LEFT JOIN "VirtualKey" vk ON vk."id" = e."keyId" ${unnestTags('vk."tags"')}`;
const TAG_SET_UNNEST = unnestTags('e."tags"');

// Report aggregates group up to hundreds of thousands of rollup rows: hashed in memory, not sorted on disk.
const REPORT_WORK_MEM = '64MB';

/** An IANA zone as an SQL literal; zones are validated on the way in, this only refuses what could break the quoting. */
function zoneLiteral(zone: string): string {
  if (!/^[A-Za-z0-9_+\-/]{1,64}$/.test(zone))
    throw new ReportingException(ReportingExceptionCode.InvalidQuery, `unusable time zone ${zone}`, 'timeZone');
  return `'${zone}'`;
}

/** `[start, end)` of the calendar days `from` to `to` in `zone`: local midnights as UTC instants. */
export function zonedDayRange(from: string, to: string, zone: string): DayRange {
  const range = dayRange(from, to);
  const midnight = (day: string) => DateTime.fromISO(day, { zone }).startOf('day').toUTC().toJSDate();
  const next = DateTime.fromISO(to, { zone }).plus({ days: 1 }).toISODate() as string;
  return { ...range, start: midnight(from), end: midnight(next) };
}

/** A row as the pg driver returns it: int8 as text. */
interface RawRow {
  teamId?: string;
  teamName?: string | null;
  userId?: string;
  userEmail?: string | null;
  keyId?: string;
  keyName?: string | null;
  keyPrefix?: string | null;
  upstreamId?: string;
  upstreamNamespace?: string | null;
  toolName?: string;
  day?: string;
  calls: string;
  errors: string;
  outputTokens: string;
  costMicros: string;
  /** With `top`: every row's count and sums, on each row kept. */
  allRows?: string;
  allCalls?: string;
  allErrors?: string;
  allOutputTokens?: string;
  allCostMicros?: string;
  /** A page's lines (spendReportPage): a row or a subtotal (its group's label, rows and sums in the figures), and the report's groups. */
  lineKind?: 'row' | 'subtotal' | null;
  lineGroup?: string | null;
  groupRows?: string | null;
  allGroups?: string;
}

/** Options of a spend report: its filters, and the caller's scope (which forces a team or user filter). */
export interface SpendReportOptions {
  filters?: Partial<SpendFilters>;
  scope?: ReportScope;
  /**
   * At most this many rows (1 to MAX_REPORT_ROWS), the costliest (ties: more calls, then the
   * report's order), the others summed as `remainder`; ranked and summed in Postgres, so no row
   * cap applies. Absent: every row, refused beyond MAX_REPORT_ROWS. No effect without a breakdown.
   */
  top?: number;
}

/** Spend over the org's calendar days, with the ledger's sums (read from a rollup that holds them where one fits). */
@Injectable()
export class SpendReportService {
  constructor(private readonly prisma: PrismaService) {}

  /**
   * Days are calendar days in the organisation's current time zone; the filters AND together, the
   * values of one filter OR; a scope other than the org forces its team or user filter (and refuses
   * another one). Grouped by tag, a call of a key with several tags is in several rows, so the
   * totals are computed apart (the ledger's sum, each call once).
   */
  async spendReport(
    orgId: string,
    from: string,
    to: string,
    groupBy: ReportDimension[],
    opts: SpendReportOptions = {},
  ): Promise<SpendReport> {
    const top = groupBy.length > 0 ? opts.top : undefined;
    if (top !== undefined && !(Number.isInteger(top) && top >= 1 && top <= MAX_REPORT_ROWS))
      throw new ReportingException(
        ReportingExceptionCode.InvalidQuery,
        `top must be a whole number from 1 to ${MAX_REPORT_ROWS} (got ${top})`,
        'top',
      );
    const plan = await this.reportPlan(orgId, from, to, groupBy, opts);
    // With `top`, every group is aggregated here and only the costliest `top` leave Postgres, each
    // carrying the count and sums of all of them (a window over the whole set: no sort of it, the
    // LIMIT keeps a top-N heap); without, more rows than the cap are refused below.
    const cap = top === undefined ? Prisma.sql`LIMIT ${MAX_REPORT_ROWS + 1}` : Prisma.empty;
    const ranked =
      top === undefined
        ? Prisma.empty
        : Prisma.sql`, t AS (
        SELECT a.*, ${Prisma.raw(allFigures('a', 'OVER ()'))}
        FROM a WHERE a."calls" > 0
        ORDER BY a."costMicros" DESC, a."calls" DESC, ${Prisma.raw(plan.dimensionOrder('a'))}
        LIMIT ${top}
      )`;
    const outerOrder = plan.groupBy.length > 0 ? `ORDER BY ${plan.dimensionOrder('a')}` : '';
    const rows = await this.reportRows(
      async (client) => Prisma.sql`
      WITH a AS (${await plan.aggregate(client, cap)})${ranked}
      SELECT a.*${Prisma.raw(plan.names.map((n) => `, ${n}`).join(''))}
      FROM ${Prisma.raw(top === undefined ? 'a' : 't a')} ${Prisma.raw(plan.joins.join(' '))}
      ${Prisma.raw(outerOrder)}
    `,
    );
    if (top === undefined && rows.length > MAX_REPORT_ROWS) throw reportTooLarge();

    const out: SpendRow[] = [];
    let totals = zeroFigures();
    for (const r of rows) {
      const row = spendRow(r, plan.dimensionColumns);
      // With no breakdown the aggregate always returns one row, even over no calls.
      if (row.figures.calls === 0n) continue;
      out.push(row);
      totals = addFigures(totals, row.figures);
    }
    sortRows(out, plan.dimensionColumns);
    let remainder: SpendRemainder | null = null;
    if (top !== undefined && rows.length > 0 && Number(rows[0].allRows) > out.length) {
      const every = allFiguresOf(rows[0]);
      const figures = zeroFigures();
      for (const m of REPORT_METRICS) figures[m] = every[m] - totals[m];
      remainder = { rows: Number(rows[0].allRows) - out.length, figures };
      totals = every;
    }
    return this.finishReport(plan, out, totals, top !== undefined ? { remainder } : {});
  }

  /**
   * One page of a report's table (pageSpendReport's lines: rows sorted, a subtotal line after each
   * value of the first of two breakdowns or more), numbered and cut in Postgres: only the page's rows
   * and subtotals leave it, with the count and sums of every row. Null where the page needs every row
   * in Node: a breakdown by day (the chart's series), a sort on a breakdown (names in the console's
   * collation), or no breakdown. The same rows, lines and totals as pageSpendReport of the whole report,
   * and no MAX_REPORT_ROWS cap (the Node path keeps it: it loads every row).
   */
  async spendReportPage(
    orgId: string,
    from: string,
    to: string,
    groupBy: ReportDimension[],
    opts: SpendReportOptions & { offset: number; limit: number; sort: ReportSort | null },
  ): Promise<{ report: SpendReport; page: ReportPage } | null> {
    const { offset, limit, sort } = opts;
    if (!pagedInSql(groupBy, sort)) return null;
    const plan = await this.reportPlan(orgId, from, to, groupBy, { filters: opts.filters, scope: opts.scope });
    const dir = sort?.direction === 'desc' ? 'DESC' : 'ASC';
    // The report's order, or the sort's on a figure (stable: ties keep the report's order).
    const rowOrder = `${sort ? `a."${sort.column}" ${dir}, ` : ''}${plan.dimensionOrder('a')}`;
    // Groups where their first row is, or by their subtotal on the sorted figure (ties: the same).
    const groupOrder = `${sort ? `gr."group${capitalise(sort.column)}" ${dir}, ` : ''}gr."groupFirst"`;
    const subtotals = groupBy.length >= 2;
    const first = groupBy[0];
    // Lines group by the first breakdown's label (pageSpendReport's groups: names, not ids).
    const label = subtotals && first !== 'day' ? labelSql(first) : 'NULL::text';
    const end = offset + limit;
    const rowColumns = [...plan.dimensionColumns, ...REPORT_METRICS];
    const list = (alias: string) => rowColumns.map((c) => `${alias}."${c}"`).join(', ');
    const nulls = plan.dimensionColumns.map(() => 'NULL').join(', ');
    // `<prefix><Figure>`: each figure summed over the column column(figure) names.
    const sums = (prefix: string, column: (m: string) => string) =>
      REPORT_METRICS.map((m) => `tollgate_sum_int8(${column(m)}) AS "${prefix}${capitalise(m)}"`).join(', ');
    const groupFigures = REPORT_METRICS.map((m) => `pg."group${capitalise(m)}"`).join(', ');
    // Names are joined to the page's rows only; the rest is numbered and grouped on ids.
    const named = (rows: string, where: string) =>
      `(SELECT a.*${plan.names.map((n) => `, ${n}`).join('')} FROM ${rows} a ${plan.joins.join(' ')} WHERE ${where}) r`;
    // Only the page's rows are numbered within their group: the groups (a few hundred at most, one per
    // label of the first breakdown) are placed first, each taking its rows' lines and its subtotal's.
    // A group is a label (pageSpendReport's: two ids can share a name), so the rows are first summed per
    // id of the first breakdown (firsts) and only those few rows are named and grouped by label.
    const firstColumns = outputColumns([first]);
    const firstList = (alias: string) => firstColumns.map((c) => `${alias}."${c}"`).join(', ');
    // A tag may be none (NULL): the same group.
    const sameFirst = firstColumns
      .map((c) => (c === 'tag' ? `l."tag" IS NOT DISTINCT FROM n."tag"` : `l."${c}" = n."${c}"`))
      .join(' AND ');
    const pageRows = subtotals
      ? Prisma.sql`
      firsts AS (
        SELECT ${Prisma.raw(firstList('n'))}, min(n."rowRank") AS "firstRank", count(*) AS "firstRows",
               ${Prisma.raw(sums('first', (m) => `n."${m}"`))}
        FROM numbered n GROUP BY ${Prisma.raw(firstList('n'))}
      ),
      labelled AS (
        SELECT a.*, ${Prisma.raw(label)} AS "lineGroup" FROM firsts a ${Prisma.raw(plan.joinsOf(first).join(' '))}
      ),
      groups AS (
        SELECT l."lineGroup", min(l."firstRank") AS "groupFirst", sum(l."firstRows")::bigint AS "groupRows",
               ${Prisma.raw(sums('group', (m) => `l."first${capitalise(m)}"`))}
        FROM labelled l GROUP BY l."lineGroup"
      ),
      placed AS (
        SELECT gr.*, COALESCE(sum(gr."groupRows" + 1) OVER (ORDER BY ${Prisma.raw(groupOrder)} ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0)::bigint AS "groupStart"
        FROM groups gr
      ),
      page_groups AS (
        SELECT * FROM placed WHERE "groupStart" < ${end} AND "groupStart" + "groupRows" >= ${offset}
      ),
      page_rows AS (
        SELECT n.*, pg."groupStart" + row_number() OVER (PARTITION BY pg."lineGroup" ORDER BY n."rowRank") - 1 AS "line"
        FROM page_groups pg JOIN labelled l ON l."lineGroup" = pg."lineGroup" JOIN numbered n ON ${Prisma.raw(sameFirst)}
      ),
      page_lines AS (
        SELECT 'row' AS "lineKind", r."line" AS "lineAt", NULL::text AS "lineGroup", NULL::bigint AS "groupRows", ${Prisma.raw(list('r'))}
        FROM ${Prisma.raw(named('page_rows', `a."line" >= ${offset} AND a."line" < ${end}`))}
        UNION ALL
        SELECT 'subtotal', pg."groupStart" + pg."groupRows", pg."lineGroup", pg."groupRows", ${Prisma.raw(nulls ? `${nulls}, ` : '')}${Prisma.raw(groupFigures)}
        FROM page_groups pg WHERE pg."groupStart" + pg."groupRows" >= ${offset} AND pg."groupStart" + pg."groupRows" < ${end}
      ),
      summary AS (
        SELECT COALESCE(sum(f."firstRows"), 0)::bigint AS "allRows",
               ${Prisma.raw(sums('all', (m) => `f."first${capitalise(m)}"`))},
               (SELECT count(*) FROM groups) AS "allGroups"
        FROM firsts f
      )`
      : Prisma.sql`
      page_lines AS (
        SELECT 'row' AS "lineKind", r."rowRank" - 1 AS "lineAt", ${Prisma.raw(list('r'))}
        FROM ${Prisma.raw(named('numbered', `a."rowRank" > ${offset} AND a."rowRank" <= ${end}`))}
      ),
      summary AS (SELECT ${Prisma.raw(allFigures('n', ''))}, 0 AS "allGroups" FROM numbered n)`;
    const rows = await this.reportRows(
      async (client) => Prisma.sql`
      WITH a AS (${await plan.aggregate(client, Prisma.empty)}),
      numbered AS (
        SELECT a.*, row_number() OVER (ORDER BY ${Prisma.raw(rowOrder)}) AS "rowRank"
        FROM a WHERE a."calls" > 0
      ),${pageRows}
      SELECT summary.*, page_lines.* FROM summary LEFT JOIN page_lines ON true ORDER BY page_lines."lineAt"
    `,
    );
    // No row cap: only the page's lines leave Postgres, however many rows the report has.
    const every = rows[0];
    const totalRows = Number(every.allRows);
    const page: ReportPage = {
      offset,
      limit,
      totalLines: totalRows + Number(every.allGroups),
      totalRows,
      rows: [],
      subtotals: [],
    };
    for (const r of rows) {
      if (r.lineKind === 'row') page.rows.push(spendRow(r, plan.dimensionColumns));
      else if (r.lineKind === 'subtotal')
        page.subtotals.push({
          afterRow: page.rows.length - 1,
          group: r.lineGroup!,
          rows: Number(r.groupRows),
          figures: spendRow(r, []).figures,
        });
    }
    return { report: await this.finishReport(plan, page.rows, allFiguresOf(every), {}), page };
  }

  /** What a report reads and how it names and orders its rows: the org's zone, the source, the aggregate's SQL. */
  private async reportPlan(
    orgId: string,
    from: string,
    to: string,
    groupBy: ReportDimension[],
    opts: Pick<SpendReportOptions, 'filters' | 'scope'>,
  ): Promise<ReportPlan> {
    const scope = opts.scope ?? ORG_SCOPE;
    const filters = scopeFilters(scope, {
      ...noFilters(),
      ...opts.filters,
      tag: opts.filters?.tag ?? null,
    });
    // The org's zone and the zone its rollups are in, read together: rollups of another zone are not used.
    const [org] = await this.prisma.reports.$queryRaw<{ timeZone: string; rollupZone: string | null }[]>`
      SELECT o."timeZone", c."timeZone" AS "rollupZone"
      FROM "Organization" o LEFT JOIN "UsageRollupCoverage" c ON c."orgId" = o."id"
      WHERE o."id" = ${orgId}::uuid`;
    const timeZone = org?.timeZone ?? 'UTC';
    const range = zonedDayRange(from, to, timeZone);
    const sourceName = reportSource(groupBy, filters, org !== undefined && org.rollupZone === timeZone);
    const source = SOURCE_SQL[sourceName];
    const GROUP_SQL = dimensionSql(source.day(zoneLiteral(timeZone)));
    const selects = new Set<string>();
    const groups = new Set<string>();
    for (const d of groupBy) {
      // `tool` already carries the upstream; keep each column once.
      for (const s of GROUP_SQL[d].select) selects.add(s);
      for (const g of GROUP_SQL[d].groupBy) groups.add(g);
    }
    const byTag = groupBy.includes('tag');
    // Names for the ids, joined after the aggregate so a rename never splits a group.
    const lookups = (
      [
        { when: ['team'], names: ['t."name" AS "teamName"'], join: 'LEFT JOIN "Team" t ON t."id" = a."teamId"' },
        { when: ['user'], names: ['u."email" AS "userEmail"'], join: 'LEFT JOIN "User" u ON u."id" = a."userId"' },
        {
          when: ['key'],
          names: ['k."name" AS "keyName"', 'k."prefix" AS "keyPrefix"'],
          join: 'LEFT JOIN "VirtualKey" k ON k."id" = a."keyId"',
        },
        {
          when: ['upstream', 'tool'],
          names: ['s."namespace" AS "upstreamNamespace"'],
          join: 'LEFT JOIN "UpstreamServer" s ON s."id" = a."upstreamId"',
        },
      ] satisfies { when: ReportDimension[]; names: string[]; join: string }[]
    ).filter((l) => l.when.some((d) => groupBy.includes(d as ReportDimension)));
    const selectSql = [...selects].map((s) => `${s}, `).join('');
    const groupSql = groups.size > 0 ? `GROUP BY ${[...groups].join(', ')}` : '';
    // A rollup grouped by tag is summed per tag set first, with the range and filters applied inside.
    const perTagSet = source !== SOURCE_SQL.ledger && byTag;
    // Without days, a rollup with month rows reads whole months (and dekads) from them (see rangeCover).
    const monthly = groupBy.includes('day') ? undefined : MONTHLY_ROLLUPS[sourceName];
    const fromSql = (cover: RangeCover | null) => {
      const table = monthly && cover ? coverRows(monthly, orgId, range, cover) : Prisma.raw(source.table);
      return perTagSet ? rollupPerTagSet(source.table, table, orgId, range, groupBy, filters) : table;
    };
    const tagJoin = !byTag ? '' : perTagSet ? TAG_SET_UNNEST : LEDGER_TAG_JOIN;
    const whereSql = perTagSet
      ? Prisma.empty
      : source === SOURCE_SQL.ledger
        ? Prisma.sql`AND e."occurredAt" >= ${isoTimestamp(range.start)}::timestamp AND e."occurredAt" < ${isoTimestamp(range.end)}::timestamp ${filterSql('e', filters)}`
        : Prisma.sql`AND e."day" BETWEEN ${range.from}::date AND ${range.to}::date ${filterSql('e', filters, TAGGED_SOURCES.includes(source.table))}`;
    const columns = reportColumns(groupBy);
    return {
      orgId,
      range,
      timeZone,
      filters,
      scope,
      groupBy,
      columns,
      dimensionColumns: columns.filter((c) => !(REPORT_METRICS as readonly string[]).includes(c)),
      names: lookups.flatMap((l) => l.names),
      joins: lookups.map((l) => l.join),
      joinsOf: (dim) => lookups.filter((l) => (l.when as ReportDimension[]).includes(dim)).map((l) => l.join),
      // Sorted as sortRows orders them (byte order, nulls first), so that sort finds them in order.
      dimensionOrder: (alias) =>
        outputColumns(groupBy)
          .map(
            (c) => `${alias}."${c}"${c === 'toolName' || c === 'tag' || c === 'day' ? ' COLLATE "C"' : ''} NULLS FIRST`,
          )
          .join(', '),
      aggregate: async (client, cap) => {
        const cover = monthly ? await rangeCover(client, monthly, orgId, range) : null;
        // A cover's rows are a few per group (users by tool over 30 days at 1M ledger rows: 103k rows,
        // 35k groups), so a parallel plan's partial aggregates are nearly as many as its rows: the
        // workers' sums and the gather cost more than they save (150 ms serial against 266 ms
        // parallel in Postgres alone, 2 cores). This transaction only (reportRows' SET LOCAL).
        if (cover) await client.query('SET LOCAL max_parallel_workers_per_gather = 0');
        // A group whose calls were all on the days subtracted sums to none: not a row.
        const having = cover && coverSubtracts(cover) && groupSql ? 'HAVING tollgate_sum_int8(e."calls") <> 0' : '';
        return Prisma.sql`
        SELECT ${Prisma.raw(selectSql)} ${Prisma.raw(source.figures)}
        FROM ${fromSql(cover)} e ${Prisma.raw(tagJoin)}
        WHERE e."orgId" = ${orgId}::uuid
          ${whereSql}
        ${Prisma.raw(groupSql)} ${Prisma.raw(having)}
        ${cap}`;
      },
    };
  }

  /** The report around its rows and totals: grouped by tag, the totals counted apart; months retention dropped named. */
  private async finishReport(
    plan: ReportPlan,
    rows: SpendRow[],
    rowTotals: SpendFigures,
    extra: { remainder?: SpendRemainder | null },
  ): Promise<SpendReport> {
    const { orgId, range, filters, scope, groupBy } = plan;
    const totals = groupBy.includes('tag')
      ? (await this.spendReport(orgId, range.from, range.to, [], { filters, scope })).totals
      : rowTotals;
    // Months retention dropped: their calls are in no rollup or ledger row any more, the report says so.
    const [dropped] = await this.prisma.reports.$queryRaw<{ end: Date | null }[]>`
      SELECT max("rangeEnd") AS "end" FROM "UsageLedgerRetention" WHERE "rangeEnd" > ${isoTimestamp(range.start)}::timestamp`;
    return {
      orgId,
      from: range.from,
      to: range.to,
      timeZone: plan.timeZone,
      tag: filters.tag,
      filters,
      scope,
      groupBy,
      columns: plan.columns,
      rows,
      totals,
      ...extra,
      ...(dropped?.end ? { droppedBefore: dropped.end.toISOString() } : {}),
    };
  }

  /**
   * Runs a report statement on the pg pool under the reports' client (the read replica when
   * DATABASE_READ_URL is set; rows of tens of thousands cost far less there than through Prisma), read-only, with room to aggregate in memory (SET LOCAL: this transaction only).
   */
  private async reportRows(statement: (client: ReportClient) => Promise<Prisma.Sql>): Promise<RawRow[]> {
    const client = await this.prisma.reportsPool.connect();
    let broken: Error | undefined;
    try {
      // One snapshot for what the statement is built from (the periods read whole) and the statement.
      await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
      await client.query(`SET LOCAL work_mem = '${REPORT_WORK_MEM}'`);
      const sql = await statement(client);
      const res = await client.query<RawRow>({ text: sql.text, values: sql.values });
      await client.query('COMMIT');
      return res.rows;
    } catch (err) {
      await client.query('ROLLBACK').catch((e: Error) => (broken = e));
      throw err;
    } finally {
      client.release(broken);
    }
  }
}

/** The id and text columns a breakdown's rows are ordered by (names follow their ids). */
function outputColumns(groupBy: readonly ReportDimension[]): string[] {
  const cols: string[] = [];
  for (const d of groupBy)
    for (const c of d === 'tag' ? ['tag'] : ROLLUP_COLUMNS[d]) if (!cols.includes(c)) cols.push(c);
  return cols;
}

/** What the cross-organisation report can be broken down by. */
export const PLATFORM_REPORT_DIMENSIONS = ['org', 'day'] as const;
export type PlatformReportDimension = (typeof PLATFORM_REPORT_DIMENSIONS)[number];

export interface PlatformSpendRow {
  orgId: string;
  orgName: string | null;
  orgSlug: string | null;
  day: string | null;
  figures: SpendFigures;
}

export interface PlatformSpendReport {
  from: string;
  to: string;
  groupBy: PlatformReportDimension[];
  rows: PlatformSpendRow[];
  totals: SpendFigures;
}

// Any organisation's local day lies within 14 hours of the UTC day (UTC-12 to UTC+14).
const ZONE_SLACK_MS = 14 * 3600 * 1000;

/**
 * Spend across organisations for the platform admin, from the ledger. Each organisation's calls
 * count on its own calendar days (its current zone). A purged organisation still appears: the
 * ledger stays, and its name comes from the audit row of its deletion.
 */
@Injectable()
export class PlatformSpendReportService {
  constructor(private readonly prisma: PrismaService) {}

  async platformSpendReport(
    from: string,
    to: string,
    groupBy: PlatformReportDimension[],
  ): Promise<PlatformSpendReport> {
    const range = dayRange(from, to);
    const byDay = groupBy.includes('day');
    const day = localDay(`COALESCE(o."timeZone", 'UTC')`);
    const rows = await this.prisma.reports.$queryRaw<
      {
        orgId: string;
        orgName: string | null;
        orgSlug: string | null;
        day: string | null;
        calls: bigint;
        errors: bigint;
        outputTokens: bigint;
        costMicros: bigint;
      }[]
    >`
      WITH a AS (
        SELECT e."orgId" AS "orgId",
               ${Prisma.raw(byDay ? `to_char(${day}, 'YYYY-MM-DD')` : 'NULL::text')} AS "day",
               COUNT(*)::bigint AS "calls",
               COUNT(*) FILTER (WHERE e."outcome" <> 'OK')::bigint AS "errors",
               COALESCE(SUM(e."outputTokens"), 0)::bigint AS "outputTokens",
               COALESCE(SUM(e."costMicros"), 0)::bigint AS "costMicros"
        FROM "UsageEvent" e LEFT JOIN "Organization" o ON o."id" = e."orgId"
        WHERE e."occurredAt" >= ${isoTimestamp(new Date(range.start.getTime() - ZONE_SLACK_MS))}::timestamp
          AND e."occurredAt" < ${isoTimestamp(new Date(range.end.getTime() + ZONE_SLACK_MS))}::timestamp
          AND ${Prisma.raw(day)} BETWEEN ${from}::date AND ${to}::date
        GROUP BY 1, 2
        LIMIT ${MAX_REPORT_ROWS + 1}
      )
      SELECT a.*,
             COALESCE(o."name", (SELECT d."details"->>'name' FROM "AuditEvent" d WHERE d."orgId" = a."orgId" AND d."action" = 'org.deleted' ORDER BY d."createdAt" DESC LIMIT 1)) AS "orgName",
             COALESCE(o."slug", (SELECT d."details"->>'slug' FROM "AuditEvent" d WHERE d."orgId" = a."orgId" AND d."action" = 'org.deleted' ORDER BY d."createdAt" DESC LIMIT 1)) AS "orgSlug"
      FROM a LEFT JOIN "Organization" o ON o."id" = a."orgId"
    `;
    if (rows.length > MAX_REPORT_ROWS) {
      throw new ReportingException(
        ReportingExceptionCode.ReportTooLarge,
        `the report has more than ${MAX_REPORT_ROWS} rows: narrow the date range or groupBy`,
        'groupBy',
      );
    }
    // Without `org` the rows of each day (or of everything) are summed across organisations.
    const merged = new Map<string, PlatformSpendRow>();
    let totals = zeroFigures();
    for (const r of rows) {
      const figures: SpendFigures = {
        calls: r.calls,
        errors: r.errors,
        outputTokens: r.outputTokens,
        costMicros: r.costMicros,
      };
      totals = addFigures(totals, figures);
      const byOrg = groupBy.includes('org');
      const id = `${byOrg ? r.orgId : ''}|${r.day ?? ''}`;
      const row = merged.get(id);
      if (row) row.figures = addFigures(row.figures, figures);
      else
        merged.set(id, {
          orgId: byOrg ? r.orgId : '',
          orgName: byOrg ? r.orgName : null,
          orgSlug: byOrg ? r.orgSlug : null,
          day: r.day,
          figures,
        });
    }
    const out = [...merged.values()].sort(
      (a, b) => (a.orgName ?? a.orgId).localeCompare(b.orgName ?? b.orgId) || (a.day ?? '').localeCompare(b.day ?? ''),
    );
    return { from: range.from, to: range.to, groupBy, rows: out, totals };
  }
}

/** `timestamp without time zone` literal for a UTC instant (the ledger stores UTC). */
function isoTimestamp(d: Date): string {
  return d.toISOString().replace('T', ' ').replace('Z', '');
}

/** The join after the aggregate does not keep its order; sort by the dimension columns again. */
function sortRows(rows: SpendRow[], columns: string[]): void {
  rows.sort((a, b) => {
    for (const c of columns) {
      const x = a[c] ?? '';
      const y = b[c] ?? '';
      if (x !== y) return x < y ? -1 : 1;
    }
    return 0;
  });
}
