import { Injectable } from '@nestjs/common';
import { Prisma, PrismaService } from '@tollgate/db';
import { DISCOVERY_TRAIL_KINDS, TRAIL_KINDS, TrailKind } from '@tollgate/kernel';
import { CallLogPosition } from './call-log.service';
import { ReportingException, ReportingExceptionCode } from './reporting.exception';
import { ORG_SCOPE, ReportScope, noFilters, scopeFilters } from './spend-report';

export const MAX_TRAIL_PAGE = 500;
/** An export holds at most this many steps: narrow it by session, key or time. */
export const MAX_TRAIL_EXPORT = 100_000;

export interface TrailQuery {
  sessionId?: string;
  teamId?: string[];
  userId?: string[];
  keyId?: string[];
  kind?: TrailKind[];
  /** Inclusive start and exclusive end (UTC instants). */
  from?: Date;
  to?: Date;
  limit?: number;
  /** Steps strictly after this position (the timeline runs oldest first). */
  cursor?: CallLogPosition | null;
}

export interface TrailStepRow {
  id: string;
  occurredAt: Date;
  sessionId: string | null;
  teamId: string;
  userId: string;
  keyId: string;
  kind: TrailKind;
  name: string;
  catalogVersion: string | null;
  tokens: number;
  ok: boolean;
  code: string | null;
  /** The ledger row of a call, read or get (UsageEvent id). */
  callId: string | null;
  costMicros: bigint | null;
  detail: Record<string, unknown>;
  /** Null unless the org kept full content when the step was recorded. */
  content: Record<string, unknown> | null;
  /**
   * A call: the latest earlier discovery step of its session that named the tool (the search that
   * led to it); a resource read or prompt get: the latest list of its session that showed it.
   */
  ledBy: string | null;
  /** A script: the stub and doc paths its session read before it (what it was written against). */
  readBefore: string[] | null;
}

export interface TrailSummary {
  steps: number;
  discoveryTokens: number;
  callTokens: number;
  costMicros: bigint;
}

export interface TrailPage {
  rows: TrailStepRow[];
  nextCursor: CallLogPosition | null;
  /** Totals over every step the filters select (not just this page). */
  summary: TrailSummary;
}

/** `SEARCH,CALL` -> kinds; a 400 naming `kind` for anything else. */
export function parseTrailKinds(value: string | undefined): TrailKind[] {
  if (value === undefined || value === '') return [];
  const out = [...new Set(value.split(',').map((s) => s.trim()))];
  const bad = out.find((k) => !(TRAIL_KINDS as readonly string[]).includes(k));
  if (bad !== undefined)
    throw new ReportingException(
      ReportingExceptionCode.InvalidQuery,
      `kind must be a comma-separated list of ${TRAIL_KINDS.join(', ')} (got "${bad.slice(0, 40)}")`,
      'kind',
    );
  return out as TrailKind[];
}

/** An ISO 8601 instant, or a 400 naming the field. */
export function parseTrailInstant(value: string | undefined, field: 'from' | 'to'): Date | undefined {
  if (value === undefined || value === '') return undefined;
  const at = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2}))?$/.test(value)
    ? new Date(value)
    : new Date(NaN);
  if (Number.isNaN(at.getTime()) || at.getUTCFullYear() > 9999)
    throw new ReportingException(
      ReportingExceptionCode.InvalidQuery,
      `${field} must be an ISO 8601 date or date-time, e.g. 2026-11-26T08:00:00Z`,
      field,
    );
  return at;
}

// A URI template as a LIKE pattern: LIKE's own characters escaped, then each {variable} a wildcard.
const LIKE_SPECIAL = '([\\\\%_])';
const LIKE_ESCAPED = '\\\\\\1';
const TEMPLATE_VARIABLE = '\\{[^}]*\\}';

interface RawStep {
  id: string;
  occurredAt: string;
  sessionId: string | null;
  teamId: string;
  userId: string;
  keyId: string;
  kind: TrailKind;
  name: string;
  catalogVersion: string | null;
  tokens: number;
  ok: boolean;
  code: string | null;
  callId: string | null;
  costMicros: string | null;
  detail: Record<string, unknown>;
  content: Record<string, unknown> | null;
  ledBy: string | null;
  readBefore: string[] | null;
}

/**
 * An agent's trail: what it was shown and what it did, oldest first, a page at a time (keyset on
 * time and id, through the ("orgId", "sessionId" | "keyId", "occurredAt") indexes), scoped like the
 * call log: org admins everything, a team admin its team's keys, a member their own. Each call is
 * linked to the search (or schema or stub read) of its session that last named its tool, each
 * resource read and prompt get to the list that last showed it, and each script to the stubs and
 * docs its session read before it.
 */
@Injectable()
export class TrailService {
  constructor(private readonly prisma: PrismaService) {}

  async trail(orgId: string, query: TrailQuery, scope: ReportScope = ORG_SCOPE): Promise<TrailPage> {
    const limit = Math.min(Math.max(query.limit ?? 100, 1), MAX_TRAIL_PAGE);
    const where = this.where(orgId, query, scope);
    const cursor = query.cursor ?? null;
    const after = cursor
      ? Prisma.sql`AND (t."occurredAt", t."id" COLLATE "C") > (${cursor.occurredAt.toISOString()}::timestamp, ${cursor.id}::text COLLATE "C")`
      : Prisma.empty;
    const raw = await this.prisma.reports.$queryRaw<RawStep[]>`
      SELECT t."id", to_char(t."occurredAt", 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "occurredAt", t."sessionId",
             t."teamId", t."userId", t."keyId", t."kind", t."name", t."catalogVersion", t."tokens", t."ok", t."code",
             t."callId", t."costMicros"::text AS "costMicros", t."detail", t."content",
             led."id" AS "ledBy", stubs."paths" AS "readBefore"
      FROM "TrailEvent" t
      LEFT JOIN LATERAL (
        SELECT d."id" FROM "TrailEvent" d
        WHERE t."kind" IN ('CALL', 'RESOURCE_READ', 'PROMPT_GET') AND t."sessionId" IS NOT NULL
          AND d."orgId" = t."orgId" AND d."sessionId" = t."sessionId"
          AND (d."occurredAt", d."id" COLLATE "C") < (t."occurredAt", t."id" COLLATE "C")
          AND CASE t."kind"
            WHEN 'CALL' THEN d."kind" IN ('SEARCH', 'SCHEMAS', 'FILES_READ', 'DOCS_READ')
              AND d."detail"->'names' ? t."name"
            WHEN 'PROMPT_GET' THEN d."kind" = 'PROMPTS_LIST' AND d."detail"->'names' ? t."name"
            -- A resource listed by its URI, or matched by a listed URI template ({...} as a wildcard).
            ELSE d."kind" = 'RESOURCES_LIST' AND (
              d."detail"->'names' ? t."name"
              OR EXISTS (
                SELECT 1 FROM jsonb_array_elements_text(d."detail"->'templates') tpl
                WHERE t."name" LIKE regexp_replace(
                  regexp_replace(tpl, ${LIKE_SPECIAL}, ${LIKE_ESCAPED}, 'g'), ${TEMPLATE_VARIABLE}, '%', 'g')
              ))
          END
        ORDER BY d."occurredAt" DESC, d."id" COLLATE "C" DESC
        LIMIT 1
      ) led ON true
      LEFT JOIN LATERAL (
        SELECT array_agg(DISTINCT p ORDER BY p) AS "paths"
        FROM "TrailEvent" d, jsonb_array_elements_text(d."detail"->'paths') p
        WHERE t."kind" = 'SCRIPT' AND t."sessionId" IS NOT NULL
          AND d."orgId" = t."orgId" AND d."sessionId" = t."sessionId"
          AND (d."occurredAt", d."id" COLLATE "C") < (t."occurredAt", t."id" COLLATE "C")
          AND d."kind" IN ('FILES_READ', 'DOCS_READ')
      ) stubs ON true
      WHERE ${where} ${after}
      ORDER BY t."occurredAt", t."id" COLLATE "C"
      LIMIT ${limit + 1}`;
    const rows = raw.slice(0, limit).map(toRow);
    const last = rows[rows.length - 1];
    return {
      rows,
      nextCursor: raw.length > limit && last ? { occurredAt: last.occurredAt, id: last.id } : null,
      summary: await this.summary(where),
    };
  }

  private async summary(where: Prisma.Sql): Promise<TrailSummary> {
    const [s] = await this.prisma.reports.$queryRaw<
      { steps: number; discovery: string; calls: string; cost: string }[]
    >`
      SELECT count(*)::int AS "steps",
             coalesce(sum(t."tokens") FILTER (WHERE t."kind" = ANY(${[...DISCOVERY_TRAIL_KINDS]}::text[])), 0)::text AS "discovery",
             coalesce(sum(t."tokens") FILTER (WHERE NOT t."kind" = ANY(${[...DISCOVERY_TRAIL_KINDS]}::text[])), 0)::text AS "calls",
             coalesce(sum(t."costMicros"), 0)::text AS "cost"
      FROM "TrailEvent" t WHERE ${where}`;
    return {
      steps: s?.steps ?? 0,
      discoveryTokens: Number(s?.discovery ?? 0),
      callTokens: Number(s?.calls ?? 0),
      costMicros: BigInt(s?.cost ?? '0'),
    };
  }

  private where(orgId: string, query: TrailQuery, scope: ReportScope): Prisma.Sql {
    const scoped = scopeFilters(scope, {
      ...noFilters(),
      teamId: query.teamId ?? [],
      userId: query.userId ?? [],
      keyId: query.keyId ?? [],
    });
    const parts: Prisma.Sql[] = [Prisma.sql`t."orgId" = ${orgId}::uuid`];
    if (query.sessionId !== undefined) parts.push(Prisma.sql`t."sessionId" = ${query.sessionId}`);
    if (scoped.teamId.length) parts.push(Prisma.sql`t."teamId" = ANY(${scoped.teamId}::uuid[])`);
    if (scoped.userId.length) parts.push(Prisma.sql`t."userId" = ANY(${scoped.userId}::uuid[])`);
    if (scoped.keyId.length) parts.push(Prisma.sql`t."keyId" = ANY(${scoped.keyId}::uuid[])`);
    if (query.kind?.length) parts.push(Prisma.sql`t."kind" = ANY(${query.kind}::text[])`);
    if (query.from) parts.push(Prisma.sql`t."occurredAt" >= ${query.from.toISOString()}::timestamp`);
    if (query.to) parts.push(Prisma.sql`t."occurredAt" < ${query.to.toISOString()}::timestamp`);
    return Prisma.join(parts, ' AND ');
  }
}

function toRow(r: RawStep): TrailStepRow {
  return {
    id: r.id,
    occurredAt: new Date(r.occurredAt),
    sessionId: r.sessionId,
    teamId: r.teamId,
    userId: r.userId,
    keyId: r.keyId,
    kind: r.kind,
    name: r.name,
    catalogVersion: r.catalogVersion,
    tokens: Number(r.tokens),
    ok: r.ok,
    code: r.code,
    callId: r.callId,
    costMicros: r.costMicros === null ? null : BigInt(r.costMicros),
    detail: r.detail,
    content: r.content,
    ledBy: r.ledBy,
    readBefore: r.kind === 'SCRIPT' ? (r.readBefore ?? []) : null,
  };
}
