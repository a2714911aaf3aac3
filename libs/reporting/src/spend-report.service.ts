import { Injectable } from '@nestjs/common';
import { Prisma, PrismaService } from '@tollgate/db';
import { dayRange } from './report-dates';
import { ReportingException, ReportingExceptionCode } from './reporting.exception';
import { ReportDimension, SpendFigures, SpendReport, SpendRow, addFigures, reportColumns, zeroFigures } from './spend-report';

/** More rows than this is an export, not a report: narrow the range or the breakdown. */
export const MAX_REPORT_ROWS = 50_000;

// Whitelisted SQL for each dimension: what to group the ledger by, and how to name the result.
const GROUP_SQL: Record<ReportDimension, { select: string[]; groupBy: string[] }> = {
  team: { select: ['e."teamId"'], groupBy: ['e."teamId"'] },
  user: { select: ['e."userId"'], groupBy: ['e."userId"'] },
  key: { select: ['e."keyId"'], groupBy: ['e."keyId"'] },
  upstream: { select: ['e."upstreamId"'], groupBy: ['e."upstreamId"'] },
  tool: { select: ['e."upstreamId"', 'e."toolName"'], groupBy: ['e."upstreamId"', 'e."toolName"'] },
  // Ledger timestamps are UTC (timestamp without time zone), so ::date is the UTC day.
  day: { select: [`to_char(e."occurredAt"::date, 'YYYY-MM-DD') AS "day"`], groupBy: ['e."occurredAt"::date'] },
};

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

/** Spend over UTC days, read straight from the ledger, so its totals are the ledger's sums. */
@Injectable()
export class SpendReportService {
  constructor(private readonly prisma: PrismaService) {}

  async spendReport(orgId: string, from: string, to: string, groupBy: ReportDimension[]): Promise<SpendReport> {
    const range = dayRange(from, to);
    const selects = new Set<string>();
    const groups = new Set<string>();
    for (const d of groupBy) {
      // `tool` already carries the upstream; keep each column once.
      for (const s of GROUP_SQL[d].select) selects.add(s);
      for (const g of GROUP_SQL[d].groupBy) groups.add(g);
    }
    // Names for the ids, joined after the aggregate so a rename never splits a group.
    const lookups = ([
      { when: ['team'], names: ['t."name" AS "teamName"'], join: 'LEFT JOIN "Team" t ON t."id" = a."teamId"' },
      { when: ['user'], names: ['u."email" AS "userEmail"'], join: 'LEFT JOIN "User" u ON u."id" = a."userId"' },
      { when: ['key'], names: ['k."name" AS "keyName"', 'k."prefix" AS "keyPrefix"'], join: 'LEFT JOIN "VirtualKey" k ON k."id" = a."keyId"' },
      { when: ['upstream', 'tool'], names: ['s."namespace" AS "upstreamNamespace"'], join: 'LEFT JOIN "UpstreamServer" s ON s."id" = a."upstreamId"' },
    ] satisfies { when: ReportDimension[]; names: string[]; join: string }[]).filter((l) => l.when.some((d) => groupBy.includes(d as ReportDimension)));
    const names = lookups.flatMap((l) => l.names);
    const joins = lookups.map((l) => l.join);
    const selectSql = [...selects].map((s) => `${s}, `).join('');
    const groupSql = groups.size > 0 ? `GROUP BY ${[...groups].join(', ')}` : '';
    const orderSql = groups.size > 0 ? `ORDER BY ${[...groups].map((_, i) => String(i + 1)).join(', ')}` : '';
    const rows = await this.prisma.$queryRaw<RawRow[]>`
      WITH a AS (
        SELECT ${Prisma.raw(selectSql)}
               COUNT(*)::bigint AS "calls",
               COUNT(*) FILTER (WHERE e."outcome" <> 'OK')::bigint AS "errors",
               COALESCE(SUM(e."outputTokens"), 0)::bigint AS "outputTokens",
               COALESCE(SUM(e."costMicros"), 0)::bigint AS "costMicros"
        FROM "UsageEvent" e
        WHERE e."orgId" = ${orgId}::uuid
          AND e."occurredAt" >= ${isoTimestamp(range.start)}::timestamp
          AND e."occurredAt" < ${isoTimestamp(range.end)}::timestamp
        ${Prisma.raw(groupSql)}
        ${Prisma.raw(orderSql)}
        LIMIT ${MAX_REPORT_ROWS + 1}
      )
      SELECT a.*${Prisma.raw(names.map((n) => `, ${n}`).join(''))}
      FROM a ${Prisma.raw(joins.join(' '))}
    `;
    if (rows.length > MAX_REPORT_ROWS) {
      throw new ReportingException(ReportingExceptionCode.ReportTooLarge, `the report has more than ${MAX_REPORT_ROWS} rows: narrow the date range or groupBy`, 'groupBy');
    }

    const columns = reportColumns(groupBy);
    const dimensionColumns = columns.filter((c) => !['calls', 'errors', 'outputTokens', 'costMicros'].includes(c));
    const out: SpendRow[] = [];
    let totals = zeroFigures();
    for (const r of rows) {
      // With no breakdown the aggregate always returns one row, even over no calls.
      if (r.calls === 0n) continue;
      const figures: SpendFigures = { calls: r.calls, errors: r.errors, outputTokens: r.outputTokens, costMicros: r.costMicros };
      const row = { figures } as SpendRow;
      for (const c of dimensionColumns) row[c] = (r as unknown as Record<string, string | null>)[c] ?? null;
      out.push(row);
      totals = addFigures(totals, figures);
    }
    sortRows(out, dimensionColumns);
    return { orgId, from: range.from, to: range.to, groupBy, columns, rows: out, totals };
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
