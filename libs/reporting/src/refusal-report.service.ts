import { Injectable } from '@nestjs/common';
import { Prisma, PrismaService } from '@tollgate/db';
import { ReportingException, ReportingExceptionCode } from './reporting.exception';
import { ORG_SCOPE, ReportScope, noFilters, scopeFilters } from './spend-report';
import { zonedDayRange } from './spend-report.service';

/** What a refusal report can be broken down by. */
export const REFUSAL_DIMENSIONS = ['team', 'user', 'key', 'tool', 'code'] as const;
export type RefusalDimension = (typeof REFUSAL_DIMENSIONS)[number];

/** Most rows a refusal report returns: the largest counts first. */
export const MAX_REFUSAL_ROWS = 1000;
/** "Blocking now": BUDGET_EXCEEDED refusals within this many minutes. */
export const BLOCKING_WINDOW_MINUTES = 15;

export interface RefusalFilters {
  teamId: string[];
  userId: string[];
  keyId: string[];
  tool: string[];
  code: string[];
}

export interface RefusalRow {
  teamId?: string;
  teamName?: string | null;
  userId?: string;
  userEmail?: string | null;
  keyId?: string;
  keyName?: string | null;
  keyPrefix?: string | null;
  toolName?: string;
  code?: string;
  refusedCalls: bigint;
}

export interface RefusalReport {
  orgId: string;
  from: string;
  to: string;
  timeZone: string;
  groupBy: RefusalDimension[];
  filters: RefusalFilters;
  rows: RefusalRow[];
  /** Every refusal in the range matching the filters (not only the rows returned). */
  totalRefusedCalls: bigint;
  /** More groups than MAX_REFUSAL_ROWS: the rows are the largest, the total is still the whole. */
  truncated: boolean;
}

/** A budget that refused calls within the last BLOCKING_WINDOW_MINUTES. */
export interface BlockingBudget {
  budgetId: string;
  refusedCalls: bigint;
  lastRefusedAt: Date;
}

const CODE = /^[A-Z][A-Z0-9_]{0,63}$/;

/** `a,b` -> refusal codes; a 400 naming `code` for anything else. */
export function parseCodeList(value: string | undefined): string[] {
  if (value === undefined || value === '') return [];
  const out = [...new Set(value.split(',').map((c) => c.trim()))];
  const bad = out.find((c) => !CODE.test(c));
  if (bad !== undefined)
    throw new ReportingException(
      ReportingExceptionCode.InvalidQuery,
      `code must be a comma-separated list of refusal codes such as BUDGET_EXCEEDED (got "${bad.slice(0, 40)}")`,
      'code',
    );
  return out;
}

/** `team,code` -> dimensions; a 400 naming `groupBy` for anything else. */
export function parseRefusalGroupBy(value: string | undefined): RefusalDimension[] {
  if (value === undefined || value === '') return [];
  const out: RefusalDimension[] = [];
  for (const d of value.split(',').map((s) => s.trim())) {
    if (!(REFUSAL_DIMENSIONS as readonly string[]).includes(d))
      throw new ReportingException(
        ReportingExceptionCode.InvalidQuery,
        `groupBy must be a comma-separated list of ${REFUSAL_DIMENSIONS.join(', ')} (got "${d.slice(0, 40)}")`,
        'groupBy',
      );
    if (!out.includes(d as RefusalDimension)) out.push(d as RefusalDimension);
  }
  return out;
}

const GROUP_COLUMNS: Record<RefusalDimension, string[]> = {
  team: ['teamId'],
  user: ['userId'],
  key: ['keyId'],
  tool: ['toolName'],
  code: ['code'],
};

/**
 * Refused governed calls, counted exactly from RefusedCallRollup (kept by the insert trigger of
 * RefusedCall; its quarter-hour UTC buckets start at every zone's local midnight), so a report's
 * cost depends on the keys, tools and codes refused, not on how many calls were.
 */
@Injectable()
export class RefusalReportService {
  constructor(private readonly prisma: PrismaService) {}

  /**
   * Days are calendar days in the organisation's time zone; filters AND together, values of one
   * filter OR; a team or user scope forces its filter (and refuses another one, 403).
   */
  async refusalReport(
    orgId: string,
    from: string,
    to: string,
    groupBy: RefusalDimension[],
    opts: { filters?: Partial<RefusalFilters>; scope?: ReportScope } = {},
  ): Promise<RefusalReport> {
    const scoped = scopeFilters(opts.scope ?? ORG_SCOPE, {
      ...noFilters(),
      teamId: opts.filters?.teamId ?? [],
      userId: opts.filters?.userId ?? [],
      keyId: opts.filters?.keyId ?? [],
      tool: opts.filters?.tool ?? [],
    });
    const filters: RefusalFilters = {
      teamId: scoped.teamId,
      userId: scoped.userId,
      keyId: scoped.keyId,
      tool: scoped.tool,
      code: opts.filters?.code ?? [],
    };
    const [org] = await this.prisma.reports.$queryRaw<{ timeZone: string }[]>`
      SELECT "timeZone" FROM "Organization" WHERE "id" = ${orgId}::uuid`;
    const timeZone = org?.timeZone ?? 'UTC';
    const range = zonedDayRange(from, to, timeZone);
    const cols = groupBy.flatMap((d) => GROUP_COLUMNS[d]).map((c) => `r."${c}"`);
    const select = cols.map((c) => `${c}, `).join('');
    const group = cols.length > 0 ? `GROUP BY ${cols.join(', ')}` : '';
    const rows = await this.prisma.reports.$queryRaw<(Record<string, string | null> & { refusedCalls: string })[]>`
      WITH a AS (
        SELECT ${Prisma.raw(select)} sum(r."calls")::text AS "refusedCalls"
        FROM "RefusedCallRollup" r
        WHERE r."orgId" = ${orgId}::uuid
          AND r."bucket" >= ${utcTimestamp(range.start)}::timestamp
          AND r."bucket" < ${utcTimestamp(range.end)}::timestamp
          ${refusalFilterSql('r', filters)}
        ${Prisma.raw(group)}
      ),
      total AS (SELECT COALESCE(sum(a."refusedCalls"::bigint), 0)::text AS t, count(*) AS n FROM a),
      top AS (SELECT a.* FROM a ORDER BY a."refusedCalls"::bigint DESC LIMIT ${MAX_REFUSAL_ROWS})
      SELECT top.*, total.t AS "totalRefusedCalls", total.n::int AS "groups"
        ${Prisma.raw(groupBy.includes('team') ? ', t."name" AS "teamName"' : '')}
        ${Prisma.raw(groupBy.includes('user') ? ', u."email" AS "userEmail"' : '')}
        ${Prisma.raw(groupBy.includes('key') ? ', k."name" AS "keyName", k."prefix" AS "keyPrefix"' : '')}
      FROM total LEFT JOIN top ON true
        ${Prisma.raw(groupBy.includes('team') ? 'LEFT JOIN "Team" t ON t."id" = top."teamId"' : '')}
        ${Prisma.raw(groupBy.includes('user') ? 'LEFT JOIN "User" u ON u."id" = top."userId"' : '')}
        ${Prisma.raw(groupBy.includes('key') ? 'LEFT JOIN "VirtualKey" k ON k."id" = top."keyId"' : '')}
      ORDER BY top."refusedCalls"::bigint DESC NULLS LAST`;
    const total = BigInt(rows[0]?.totalRefusedCalls ?? '0');
    const groups = Number(rows[0]?.groups ?? 0);
    const out: RefusalRow[] = rows
      .filter((r) => r.refusedCalls !== null)
      .map(({ totalRefusedCalls: _t, groups: _g, refusedCalls, ...dims }) => ({
        ...(dims as Omit<RefusalRow, 'refusedCalls'>),
        refusedCalls: BigInt(refusedCalls),
      }));
    return {
      orgId,
      from: range.from,
      to: range.to,
      timeZone,
      groupBy,
      filters,
      rows: out,
      totalRefusedCalls: total,
      truncated: groups > MAX_REFUSAL_ROWS,
    };
  }

  /**
   * Budgets refusing calls now: BUDGET_EXCEEDED refusals of the last BLOCKING_WINDOW_MINUTES, per
   * budget (a refusal row standing for several calls counts them all), within the caller's scope.
   */
  async blockingBudgets(orgId: string, scope: ReportScope = ORG_SCOPE, now = new Date()): Promise<BlockingBudget[]> {
    const since = new Date(now.getTime() - BLOCKING_WINDOW_MINUTES * 60_000);
    const scopeSql =
      scope.kind === 'team'
        ? Prisma.sql`AND r."teamId" = ${scope.id}::uuid`
        : scope.kind === 'user'
          ? Prisma.sql`AND r."userId" = ${scope.id}::uuid`
          : Prisma.empty;
    const rows = await this.prisma.reports.$queryRaw<
      { budgetId: string; refusedCalls: string; lastRefusedAt: string }[]
    >`
      SELECT r."budgetId", sum(r."calls")::text AS "refusedCalls",
             to_char(max(r."occurredAt"), 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "lastRefusedAt"
      FROM "RefusedCall" r
      WHERE r."orgId" = ${orgId}::uuid AND r."occurredAt" >= ${utcTimestamp(since)}::timestamp
        AND r."code" = 'BUDGET_EXCEEDED' AND r."budgetId" IS NOT NULL ${scopeSql}
      GROUP BY r."budgetId"
      ORDER BY sum(r."calls") DESC`;
    return rows.map((r) => ({
      budgetId: r.budgetId,
      refusedCalls: BigInt(r.refusedCalls),
      lastRefusedAt: new Date(r.lastRefusedAt),
    }));
  }
}

/** `timestamp without time zone` literal for a UTC instant (the tables store UTC). */
export function utcTimestamp(d: Date): string {
  return d.toISOString().replace('T', ' ').replace('Z', '');
}

/** The filters as SQL on a table with teamId, userId, keyId, toolName and code. */
export function refusalFilterSql(alias: string, f: Omit<RefusalFilters, 'code'> & { code?: string[] }): Prisma.Sql {
  const parts: Prisma.Sql[] = [];
  // One value is compared with =, not = ANY: Postgres 15 walks an ("orgId", "userId", "occurredAt")
  // index in order for an equality only, so the call log's first page of one user, key or tool reads
  // a page of index entries instead of the org's whole range (5 s to 1 ms on 1,000,000 rows).
  const match = (c: string, values: string[], type: 'uuid' | 'text') =>
    values.length === 1
      ? Prisma.sql`AND ${Prisma.raw(`${alias}."${c}"`)} = ${values[0]}::${Prisma.raw(type)}`
      : Prisma.sql`AND ${Prisma.raw(`${alias}."${c}"`)} = ANY(${values}::${Prisma.raw(type)}[])`;
  if (f.teamId.length > 0) parts.push(match('teamId', f.teamId, 'uuid'));
  if (f.userId.length > 0) parts.push(match('userId', f.userId, 'uuid'));
  if (f.keyId.length > 0) parts.push(match('keyId', f.keyId, 'uuid'));
  if (f.tool.length > 0) parts.push(match('toolName', f.tool, 'text'));
  if (f.code && f.code.length > 0) parts.push(match('code', f.code, 'text'));
  return parts.length > 0 ? Prisma.join(parts, ' ') : Prisma.empty;
}
