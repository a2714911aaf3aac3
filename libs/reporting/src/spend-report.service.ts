import { Injectable } from '@nestjs/common';
import { Prisma, PrismaService } from '@tollgate/db';
import { DateTime } from 'luxon';
import { DayRange, dayRange } from './report-dates';
import { ReportingException, ReportingExceptionCode } from './reporting.exception';
import {
  ReportDimension,
  SpendFigures,
  SpendReport,
  SpendRow,
  addFigures,
  reportColumns,
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
 * Where a report's rows come from. The ledger's insert trigger keeps two rollups by the org's
 * local day (migration 20261128090000_usage_report_rollups): per key (with its team and user) and
 * per tool. A report whose breakdown and filter fit one of them reads it: a few rows per key or
 * tool and day instead of every call, with the same sums. Anything else reads the ledger.
 */
type ReportSource = 'ledger' | 'keyDays' | 'toolDays';
const KEY_DAY_DIMENSIONS: readonly ReportDimension[] = ['team', 'user', 'key', 'tag', 'day'];
const TOOL_DAY_DIMENSIONS: readonly ReportDimension[] = ['upstream', 'tool', 'day'];

export function reportSource(
  groupBy: readonly ReportDimension[],
  tag: string | undefined,
  rollupsCurrent: boolean,
): ReportSource {
  if (!rollupsCurrent) return 'ledger';
  if (!tag && groupBy.every((d) => TOOL_DAY_DIMENSIONS.includes(d))) return 'toolDays';
  if (groupBy.every((d) => KEY_DAY_DIMENSIONS.includes(d))) return 'keyDays';
  return 'ledger';
}

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
  keyDays: { table: '"UsageKeyDayRollup"', figures: rollupFigures('e'), day: () => 'e."day"' },
  toolDays: { table: '"UsageToolDayRollup"', figures: rollupFigures('e'), day: () => 'e."day"' },
};

function rollupFigures(alias: string): string {
  return ['calls', 'errors', 'outputTokens', 'costMicros']
    .map((m) => `COALESCE(SUM(${alias}."${m}"), 0)::bigint AS "${m}"`)
    .join(', ');
}

/**
 * Grouped by tag, the key rollup is first summed per key (and the team, user or day asked for), so
 * each key's tags are joined once per group, not once per key and day.
 */
function keyRollupPerKey(orgId: string, range: DayRange, groupBy: readonly ReportDimension[]): Prisma.Sql {
  const columns = [
    '"orgId"',
    '"keyId"',
    ...(['team', 'user', 'day'] as const)
      .filter((d) => groupBy.includes(d))
      .map((d) => ({ team: '"teamId"', user: '"userId"', day: '"day"' })[d]),
  ];
  const list = Prisma.raw(columns.map((c) => `r.${c}`).join(', '));
  return Prisma.sql`(SELECT ${list}, ${Prisma.raw(rollupFigures('r'))} FROM "UsageKeyDayRollup" r
    WHERE r."orgId" = ${orgId}::uuid AND r."day" BETWEEN ${range.from}::date AND ${range.to}::date GROUP BY ${list})`;
}

// A key's tags as rows (one NULL row for a key without tags), for grouping by tag.
const TAG_JOIN = `LEFT JOIN "VirtualKey" vk ON vk."id" = e."keyId"
  CROSS JOIN LATERAL unnest(CASE WHEN COALESCE(cardinality(vk."tags"), 0) = 0 THEN ARRAY[NULL]::text[] ELSE vk."tags" END) AS tg("tag")`;

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
  calls: bigint;
  errors: bigint;
  outputTokens: bigint;
  costMicros: bigint;
}

/** Spend over the org's calendar days, read straight from the ledger, so its totals are the ledger's sums. */
@Injectable()
export class SpendReportService {
  constructor(private readonly prisma: PrismaService) {}

  /**
   * Days are calendar days in the organisation's current time zone; `tag` keeps only calls of keys
   * carrying it (tags as the keys carry them now). Grouped by tag, a call of a key with several tags
   * is in several rows, so the totals are computed apart (the ledger's sum, each call once).
   */
  async spendReport(
    orgId: string,
    from: string,
    to: string,
    groupBy: ReportDimension[],
    opts: { tag?: string } = {},
  ): Promise<SpendReport> {
    // The org's zone and the zone its rollups are in, read together: rollups of another zone are not used.
    const [org] = await this.prisma.$queryRaw<{ timeZone: string; rollupZone: string | null }[]>`
      SELECT o."timeZone", c."timeZone" AS "rollupZone"
      FROM "Organization" o LEFT JOIN "UsageRollupCoverage" c ON c."orgId" = o."id"
      WHERE o."id" = ${orgId}::uuid`;
    const timeZone = org?.timeZone ?? 'UTC';
    const range = zonedDayRange(from, to, timeZone);
    const source = SOURCE_SQL[reportSource(groupBy, opts.tag, org !== undefined && org.rollupZone === timeZone)];
    const GROUP_SQL = dimensionSql(source.day(zoneLiteral(timeZone)));
    const selects = new Set<string>();
    const groups = new Set<string>();
    for (const d of groupBy) {
      // `tool` already carries the upstream; keep each column once.
      for (const s of GROUP_SQL[d].select) selects.add(s);
      for (const g of GROUP_SQL[d].groupBy) groups.add(g);
    }
    const tagJoin = groupBy.includes('tag') ? TAG_JOIN : '';
    const tagFilter = opts.tag
      ? Prisma.sql`AND EXISTS (SELECT 1 FROM "VirtualKey" fk WHERE fk."id" = e."keyId" AND ${opts.tag} = ANY(fk."tags"))`
      : Prisma.empty;
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
    const names = lookups.flatMap((l) => l.names);
    const joins = lookups.map((l) => l.join);
    const selectSql = [...selects].map((s) => `${s}, `).join('');
    const groupSql = groups.size > 0 ? `GROUP BY ${[...groups].join(', ')}` : '';
    const orderSql = groups.size > 0 ? `ORDER BY ${[...groups].map((_, i) => String(i + 1)).join(', ')}` : '';
    const perKey = source === SOURCE_SQL.keyDays && groupBy.includes('tag');
    const fromSql = perKey ? keyRollupPerKey(orgId, range, groupBy) : Prisma.raw(source.table);
    const rangeSql =
      source === SOURCE_SQL.ledger
        ? Prisma.sql`AND e."occurredAt" >= ${isoTimestamp(range.start)}::timestamp AND e."occurredAt" < ${isoTimestamp(range.end)}::timestamp`
        : perKey
          ? Prisma.empty
          : Prisma.sql`AND e."day" BETWEEN ${range.from}::date AND ${range.to}::date`;
    const rows = await this.prisma.$queryRaw<RawRow[]>`
      WITH a AS (
        SELECT ${Prisma.raw(selectSql)} ${Prisma.raw(source.figures)}
        FROM ${fromSql} e ${Prisma.raw(tagJoin)}
        WHERE e."orgId" = ${orgId}::uuid
          ${tagFilter}
          ${rangeSql}
        ${Prisma.raw(groupSql)}
        ${Prisma.raw(orderSql)}
        LIMIT ${MAX_REPORT_ROWS + 1}
      )
      SELECT a.*${Prisma.raw(names.map((n) => `, ${n}`).join(''))}
      FROM a ${Prisma.raw(joins.join(' '))}
    `;
    if (rows.length > MAX_REPORT_ROWS) {
      throw new ReportingException(
        ReportingExceptionCode.ReportTooLarge,
        `the report has more than ${MAX_REPORT_ROWS} rows: narrow the date range or groupBy`,
        'groupBy',
      );
    }

    const columns = reportColumns(groupBy);
    const dimensionColumns = columns.filter((c) => !['calls', 'errors', 'outputTokens', 'costMicros'].includes(c));
    const out: SpendRow[] = [];
    let totals = zeroFigures();
    for (const r of rows) {
      // With no breakdown the aggregate always returns one row, even over no calls.
      if (r.calls === 0n) continue;
      const figures: SpendFigures = {
        calls: r.calls,
        errors: r.errors,
        outputTokens: r.outputTokens,
        costMicros: r.costMicros,
      };
      const row = { figures } as SpendRow;
      for (const c of dimensionColumns) row[c] = (r as unknown as Record<string, string | null>)[c] ?? null;
      out.push(row);
      totals = addFigures(totals, figures);
    }
    sortRows(out, dimensionColumns);
    if (groupBy.includes('tag')) totals = (await this.spendReport(orgId, from, to, [], opts)).totals;
    return {
      orgId,
      from: range.from,
      to: range.to,
      timeZone,
      tag: opts.tag ?? null,
      groupBy,
      columns,
      rows: out,
      totals,
    };
  }
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
    const rows = await this.prisma.$queryRaw<
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
