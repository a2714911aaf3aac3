import { Injectable } from '@nestjs/common';
import { Prisma, PrismaService } from '@tollgate/db';
import { DateTime } from 'luxon';
import { refusalFilterSql, utcTimestamp } from './refusal-report.service';
import { ReportingException, ReportingExceptionCode } from './reporting.exception';
import { ORG_SCOPE, ReportScope, SpendFilters, noFilters, scopeFilters } from './spend-report';
import { zonedDayRange } from './spend-report.service';

/** A call's outcome in the log: the ledger's three, or refused (its code says why). */
export const CALL_OUTCOMES = ['OK', 'TOOL_ERROR', 'UPSTREAM_ERROR', 'REFUSED'] as const;
export type CallOutcome = (typeof CALL_OUTCOMES)[number];

export const MAX_CALL_PAGE = 200;

export interface CallLogQuery {
  /** Calendar days in the org's zone, inclusive. */
  from: string;
  to: string;
  teamId?: string[];
  userId?: string[];
  keyId?: string[];
  tool?: string[];
  outcome?: CallOutcome[];
  /** Refusal codes: only refused calls have one, so a code filter keeps refusals only. */
  code?: string[];
  limit?: number;
  cursor?: CallLogPosition | null;
}

/** Where a page ended: the last row's time and id (rows are ordered by both, newest first). */
export interface CallLogPosition {
  occurredAt: Date;
  id: string;
}

export interface CallLogRow {
  id: string;
  occurredAt: Date;
  outcome: CallOutcome;
  code: string | null;
  teamId: string;
  teamName: string | null;
  userId: string;
  userEmail: string | null;
  keyId: string;
  keyName: string | null;
  keyPrefix: string | null;
  upstreamId: string | null;
  upstreamNamespace: string | null;
  toolName: string;
  costMicros: bigint;
  outputTokens: number;
  latencyMs: number;
  /** 1, or how many refusals of this key, tool and code the row stands for (not logged one by one). */
  calls: number;
  budgetId: string | null;
  /** The call's trace id (W3C, 32 hex digits) as its ledger row keeps it; null for a refusal or a call without one. */
  traceId: string | null;
  /** The MCP session the call was made in, from its agent trail step; null without one (no session, no trail kept, a refusal). */
  sessionId: string | null;
}

export interface CallLogPage {
  from: string;
  to: string;
  timeZone: string;
  rows: CallLogRow[];
  nextCursor: CallLogPosition | null;
}

const CURSOR_VERSION = 'c1';
/** A row's time as the API prints it (ms, UTC). */
const OCCURRED = `to_char(x."occurredAt", 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
// 9999-12-31T23:59:59.999Z: a later instant prints as `+010000-…`, which Postgres refuses.
const LAST_MS = 253402300799999;

/** An opaque cursor for the page after a position: base64url of a version, the time in ms and the id. */
export function encodeCallCursor(at: CallLogPosition): string {
  return Buffer.from(`${CURSOR_VERSION}|${at.occurredAt.getTime()}|${at.id}`, 'utf8').toString('base64url');
}

/** The position a cursor names; anything this API did not write is a 400 naming `cursor`. */
export function decodeCallCursor(cursor: string): CallLogPosition {
  const bad = () =>
    new ReportingException(ReportingExceptionCode.InvalidQuery, 'cursor is not one this API returned', 'cursor');
  if (!/^[A-Za-z0-9_-]{1,400}$/.test(cursor)) throw bad();
  const [version, ms, id, ...rest] = Buffer.from(cursor, 'base64url').toString('utf8').split('|');
  if (version !== CURSOR_VERSION || rest.length > 0 || !/^\d{1,15}$/.test(ms ?? '') || Number(ms) > LAST_MS)
    throw bad();
  // Ledger ids are whatever the edge chose (UUIDs today): printable, bounded.
  if (!/^[\x21-\x7e]{1,200}$/.test(id ?? '')) throw bad();
  return { occurredAt: new Date(Number(ms)), id };
}

/** `OK,REFUSED` -> outcomes; a 400 naming `outcome` for anything else. */
export function parseOutcomeList(value: string | undefined): CallOutcome[] {
  if (value === undefined || value === '') return [];
  const out = [...new Set(value.split(',').map((s) => s.trim()))];
  const bad = out.find((o) => !(CALL_OUTCOMES as readonly string[]).includes(o));
  if (bad !== undefined)
    throw new ReportingException(
      ReportingExceptionCode.InvalidQuery,
      `outcome must be a comma-separated list of ${CALL_OUTCOMES.join(', ')} (got "${bad.slice(0, 40)}")`,
      'outcome',
    );
  return out as CallOutcome[];
}

interface RawCallRow {
  id: string;
  occurredAt: string;
  outcome: CallOutcome;
  code: string | null;
  teamId: string;
  userId: string;
  keyId: string;
  upstreamId: string | null;
  toolName: string;
  costMicros: string;
  outputTokens: number;
  latencyMs: number;
  calls: number;
  budgetId: string | null;
  traceId: string | null;
}

/** A page of the ledger's rows: its bounds as SQL text and as times, the cursor's condition, its size. */
interface LedgerPage {
  start: string;
  end: string;
  after: Prisma.Sql;
  limit: number;
  startAt: Date;
  /** Rows of the page are before this: the cursor's time, or the range's end. */
  before: Date;
}

/**
 * The per-call log: the ledger's rows (UsageEvent) and refused calls (RefusedCall) of one org,
 * newest first, filtered, a page at a time with a keyset cursor (time, id). Each table is read
 * through an index in time order from the cursor on (the org's or a key's; a team's, a user's or a
 * tool's through keys, see ledgerRows), at most a page and one row each, and the two are
 * merged: a page costs the same on the first day of the ledger or its millionth row.
 */
@Injectable()
export class CallLogService {
  constructor(private readonly prisma: PrismaService) {}

  async callLog(orgId: string, query: CallLogQuery, scope: ReportScope = ORG_SCOPE): Promise<CallLogPage> {
    const limit = Math.min(Math.max(query.limit ?? 50, 1), MAX_CALL_PAGE);
    const scoped = scopeFilters(scope, {
      ...noFilters(),
      teamId: query.teamId ?? [],
      userId: query.userId ?? [],
      keyId: query.keyId ?? [],
      tool: query.tool ?? [],
    });
    const outcomes = query.outcome && query.outcome.length > 0 ? query.outcome : [...CALL_OUTCOMES];
    const codes = query.code ?? [];
    const ledgerOutcomes = codes.length > 0 ? [] : outcomes.filter((o) => o !== 'REFUSED');
    const readRefusals = outcomes.includes('REFUSED');

    const [org] = await this.prisma.reports.$queryRaw<{ timeZone: string }[]>`
      SELECT "timeZone" FROM "Organization" WHERE "id" = ${orgId}::uuid`;
    const timeZone = org?.timeZone ?? 'UTC';
    const range = zonedDayRange(query.from, query.to, timeZone);
    const start = utcTimestamp(range.start);
    let end = utcTimestamp(range.end);
    const cursor = query.cursor ?? null;
    // Keyset: rows strictly before the cursor's (time, id), ids in byte order ("C") as the merge below
    // compares them; the plain upper bound lets the index scan start at the cursor.
    const after = (alias: string) =>
      cursor
        ? Prisma.sql`AND (${Prisma.raw(`${alias}."occurredAt", ${alias}."id" COLLATE "C"`)}) < (${utcTimestamp(cursor.occurredAt)}::timestamp, ${cursor.id}::text COLLATE "C")`
        : Prisma.empty;
    if (cursor && cursor.occurredAt < range.end) end = utcTimestamp(new Date(cursor.occurredAt.getTime() + 1));
    const filters = { ...scoped, code: codes };

    const [ledger, refused] = await Promise.all([
      ledgerOutcomes.length === 0
        ? Promise.resolve([] as RawCallRow[])
        : this.ledgerRows(orgId, scoped, ledgerOutcomes, range, {
            start,
            end,
            after: after('x'),
            limit,
            startAt: range.start,
            before: cursor ? cursor.occurredAt : range.end,
          }),
      !readRefusals
        ? Promise.resolve([] as RawCallRow[])
        : this.prisma.reports.$queryRaw<RawCallRow[]>`
            SELECT x."id", ${Prisma.raw(OCCURRED)} AS "occurredAt", 'REFUSED' AS "outcome", x."code",
                   x."teamId", x."userId", x."keyId", x."upstreamId", x."toolName", '0' AS "costMicros",
                   0 AS "outputTokens", x."latencyMs", x."calls", x."budgetId", NULL AS "traceId"
            FROM "RefusedCall" x
            WHERE x."orgId" = ${orgId}::uuid AND x."occurredAt" >= ${start}::timestamp AND x."occurredAt" < ${end}::timestamp
              ${after('x')}
              ${refusalFilterSql('x', filters)}
            ORDER BY x."occurredAt" DESC, x."id" COLLATE "C" DESC
            LIMIT ${limit + 1}`,
    ]);
    const merged = [...ledger, ...refused].sort((a, b) =>
      a.occurredAt !== b.occurredAt ? (a.occurredAt < b.occurredAt ? 1 : -1) : a.id < b.id ? 1 : a.id > b.id ? -1 : 0,
    );
    const page = merged.slice(0, limit);
    const [names, sessions] = await Promise.all([this.names(page), this.sessionsOf(orgId, page)]);
    const rows: CallLogRow[] = page.map((r) => ({
      id: r.id,
      occurredAt: new Date(r.occurredAt),
      outcome: r.outcome,
      code: r.code,
      teamId: r.teamId,
      teamName: names.teams.get(r.teamId) ?? null,
      userId: r.userId,
      userEmail: names.users.get(r.userId) ?? null,
      keyId: r.keyId,
      keyName: names.keys.get(r.keyId)?.name ?? null,
      keyPrefix: names.keys.get(r.keyId)?.prefix ?? null,
      upstreamId: r.upstreamId,
      upstreamNamespace: r.upstreamId ? (names.upstreams.get(r.upstreamId) ?? null) : null,
      toolName: r.toolName,
      costMicros: BigInt(r.costMicros),
      outputTokens: Number(r.outputTokens),
      latencyMs: Number(r.latencyMs),
      calls: Number(r.calls),
      budgetId: r.budgetId,
      traceId: r.traceId,
      sessionId: r.outcome === 'REFUSED' ? null : (sessions.get(r.id) ?? null),
    }));
    const last = rows[rows.length - 1];
    return {
      from: range.from,
      to: range.to,
      timeZone,
      rows,
      nextCursor: merged.length > limit && last ? { occurredAt: last.occurredAt, id: last.id } : null,
    };
  }

  /**
   * The ledger's rows of a page, newest first. The ledger has btrees for the org's calls and a key's
   * (each walked in time order from the cursor on), but none for a team's, a user's or a tool's: each
   * costs every ledger write (about 3 us of Postgres' CPU an event in the drain). A key belongs to one
   * team and one user, so a team's or user's calls are read through their keys instead: the keys
   * with calls of that team or user in the range (UsageKeyDayRollup, two days wider on each side: its
   * days may be of another zone until rebuilt after a zone change), each key's newest rows from the
   * cursor on (at most a page each), merged. Several keys given as a filter are read so too. A tool's
   * calls are read through the days its keys called it (toolRows).
   */
  private async ledgerRows(
    orgId: string,
    filters: SpendFilters,
    outcomes: CallOutcome[],
    range: { from: string; to: string },
    page: LedgerPage,
  ): Promise<RawCallRow[]> {
    const where = Prisma.sql`x."orgId" = ${orgId}::uuid AND x."occurredAt" >= ${page.start}::timestamp AND x."occurredAt" < ${page.end}::timestamp
      ${page.after}
      ${refusalFilterSql('x', { ...filters, code: [] })}
      ${outcomes.length < 3 ? Prisma.sql`AND x."outcome"::text = ANY(${outcomes}::text[])` : Prisma.empty}`;
    const order = Prisma.raw(`x."occurredAt" DESC, x."id" COLLATE "C" DESC`);
    const columns = Prisma.sql`x."id", ${Prisma.raw(OCCURRED)} AS "occurredAt", x."outcome"::text AS "outcome", NULL AS "code",
      x."teamId", x."userId", x."keyId", x."upstreamId", x."toolName", x."costMicros"::text AS "costMicros",
      x."outputTokens", x."latencyMs", 1 AS "calls", NULL AS "budgetId", x."traceId"`;
    if (filters.tool.length > 0) return this.toolRows(orgId, filters, outcomes, range, page, { where, order, columns });
    const throughKeys = filters.teamId.length > 0 || filters.userId.length > 0 || filters.keyId.length > 1;
    if (!throughKeys)
      return this.prisma.reports.$queryRaw<RawCallRow[]>`
        SELECT ${columns} FROM "UsageEvent" x WHERE ${where} ORDER BY ${order} LIMIT ${page.limit + 1}`;
    const keys =
      filters.keyId.length > 0
        ? Prisma.sql`SELECT unnest(${filters.keyId}::uuid[]) AS key`
        : Prisma.sql`SELECT DISTINCT r."keyId" AS key FROM "UsageKeyDayRollup" r
            WHERE r."orgId" = ${orgId}::uuid AND r."day" BETWEEN ${range.from}::date - 2 AND ${range.to}::date + 2
              ${filters.teamId.length > 0 ? Prisma.sql`AND r."teamId" = ANY(${filters.teamId}::uuid[])` : Prisma.empty}
              ${filters.userId.length > 0 ? Prisma.sql`AND r."userId" = ANY(${filters.userId}::uuid[])` : Prisma.empty}`;
    // The planner takes each key for an average one (a few dozen rows in the range), so it reads all
    // of a key's rows in the range and sorts them rather than walk its index from the newest and stop
    // after a page: 370 rows a key instead of 52 for the bench's rarest team (120 ms against 36 ms on
    // 1M rows), and more as the ledger grows. Sorting is what the walk avoids, so the statement plans
    // without it (the page's final top-N sort of at most keys × page rows stays, the only way left).
    // And it prices a team's hundreds of key scans past jit_above_cost: compiling the plan took 0.9 s.
    const db = this.prisma.reports;
    const [, rows] = await db.$transaction([
      db.$queryRaw`SELECT set_config('enable_sort', 'off', true), set_config('jit', 'off', true)`,
      db.$queryRaw<RawCallRow[]>`
        SELECT ${columns}
        FROM (${keys}) k CROSS JOIN LATERAL (
          SELECT x.* FROM "UsageEvent" x WHERE x."keyId" = k.key AND ${where} ORDER BY ${order} LIMIT ${page.limit + 1}
        ) x
        ORDER BY ${order} LIMIT ${page.limit + 1}`,
    ]);
    return rows;
  }

  /**
   * A tool's calls (with any other filter), without a btree of the tool's on the ledger. The days
   * that called it, and on each the keys that did, come from UsageCallDayRollup's ("orgId",
   * "toolName", "day") (the other filters applied there too); a day's rows lie within that local day
   * in the zone the rollups are in (UsageRollupCoverage), or, while that zone is unknown (the org's
   * zone changed, rollups not rebuilt), within a day before it to two days after it in UTC (every
   * zone's day lies within). Only the newest days are read: from the newest back until their calls
   * (the rollup's counts, all wholly before the page's end) make a page and one more row. Those days
   * are then read one of two ways, whichever reads fewer rows by the rollups' counts: the org's rows
   * newest first through the primary key, checked for the tool until a page is full (a tool called
   * often), or each (key, day) pair's rows through ("orgId", "keyId", "occurredAt"), a page at most
   * each, merged (a tool called rarely). If the rows found are fewer than a page (the counts are of
   * every outcome, the outcome filter is not), the rest of the range is read through the pairs.
   */
  private async toolRows(
    orgId: string,
    filters: SpendFilters,
    outcomes: CallOutcome[],
    range: { from: string; to: string },
    page: LedgerPage,
    sql: { where: Prisma.Sql; order: Prisma.Sql; columns: Prisma.Sql },
  ): Promise<RawCallRow[]> {
    const db = this.prisma.reports;
    const match = (c: string, values: string[]) =>
      values.length > 0 ? Prisma.sql`AND ${Prisma.raw(`r."${c}"`)} = ANY(${values}::uuid[])` : Prisma.empty;
    const toolDays = (from: Prisma.Sql, to: Prisma.Sql) => Prisma.sql`
      r."orgId" = ${orgId}::uuid AND r."toolName" = ANY(${filters.tool}::text[]) AND r."day" BETWEEN ${from} AND ${to}
      ${match('teamId', filters.teamId)} ${match('userId', filters.userId)} ${match('keyId', filters.keyId)}`;
    // Calls of the outcomes asked, as far as the rollup tells them apart (errors: both error outcomes).
    const counted = !outcomes.includes('OK')
      ? Prisma.sql`sum(r."errors")`
      : outcomes.length === 1
        ? Prisma.sql`sum(r."calls" - r."errors")`
        : Prisma.sql`sum(r."calls")`;
    const [perDay, [coverage]] = await Promise.all([
      db.$queryRaw<{ day: Date; calls: bigint }[]>`
        SELECT r."day", ${counted} AS calls FROM "UsageCallDayRollup" r
        WHERE ${toolDays(Prisma.sql`${range.from}::date - 2`, Prisma.sql`${range.to}::date + 2`)}
        GROUP BY 1`,
      db.$queryRaw<{ timeZone: string | null }[]>`
        SELECT "timeZone" FROM "UsageRollupCoverage" WHERE "orgId" = ${orgId}::uuid`,
    ]);
    const zone = coverage?.timeZone ?? null;
    const DAY = 86_400_000;
    const days = perDay
      .map((d) => {
        const local = DateTime.fromISO(d.day.toISOString().slice(0, 10), { zone: zone ?? 'UTC' });
        const [from, to] = zone
          ? [local.toMillis(), local.plus({ days: 1 }).toMillis()]
          : [d.day.getTime() - DAY, d.day.getTime() + 2 * DAY];
        return { day: d.day.toISOString().slice(0, 10), from, to, calls: Number(d.calls) };
      })
      .filter((d) => d.to > page.startAt.getTime() && d.from < page.before.getTime())
      .sort((a, b) => b.to - a.to);
    // Back from the newest day until its calls, all before the page's end, fill a page and one more.
    let since = page.startAt.getTime();
    let calls = 0;
    for (const d of days) {
      if (d.to > page.before.getTime()) continue;
      calls += d.calls;
      if (calls > page.limit) {
        since = Math.max(since, d.from);
        break;
      }
    }
    const inSpan = days.filter((d) => d.to > since);
    if (inSpan.length === 0) return [];
    // A pair's window: its local day, or a day before to two after while the zone is unknown.
    const window = zone
      ? Prisma.sql`(p."day"::timestamp AT TIME ZONE ${zone}) AT TIME ZONE 'UTC', ((p."day" + 1)::timestamp AT TIME ZONE ${zone}) AT TIME ZONE 'UTC'`
      : Prisma.sql`p."day"::timestamp - interval '1 day', p."day"::timestamp + interval '2 days'`;
    const pairs = (first: string, last: string) => Prisma.sql`
      SELECT DISTINCT r."keyId" AS key, r."day" FROM "UsageCallDayRollup" r WHERE ${toolDays(Prisma.sql`${first}::date`, Prisma.sql`${last}::date`)}`;
    const dayBounds = (list: typeof days) => [
      list.reduce((a, d) => (d.day < a ? d.day : a), list[0].day),
      list.reduce((a, d) => (d.day > a ? d.day : a), list[0].day),
    ];
    // Planned as the team's read is (see ledgerRows): without sorts and JIT.
    const query = async (statement: Prisma.Sql) => {
      const [, rows] = await db.$transaction([
        db.$queryRaw`SELECT set_config('enable_sort', 'off', true), set_config('jit', 'off', true)`,
        db.$queryRaw<RawCallRow[]>(statement),
      ]);
      return rows;
    };
    const throughPairs = (list: typeof days, from: number) => {
      const [first, last] = dayBounds(list);
      return query(Prisma.sql`
        SELECT ${sql.columns}
        FROM (SELECT p.key, w.s, w.e FROM (${pairs(first, last)}) p CROSS JOIN LATERAL (SELECT ${window}) AS w(s, e)) w
        CROSS JOIN LATERAL (
          SELECT x.* FROM "UsageEvent" x
          WHERE x."keyId" = w.key AND x."occurredAt" >= w.s AND x."occurredAt" < w.e
            AND x."occurredAt" >= ${utcTimestamp(new Date(from))}::timestamp AND ${sql.where}
          ORDER BY ${sql.order} LIMIT ${page.limit + 1}
        ) x
        ORDER BY ${sql.order} LIMIT ${page.limit + 1}`);
    };
    // What each way reads, by the rollups: the org's walk about a page's share of the span's calls
    // (the tool's density), the pairs' walk every call of their keys on their days.
    const [first, last] = dayBounds(inSpan);
    const [cost] = await db.$queryRaw<{ org: bigint | null; keys: bigint | null }[]>`
      SELECT (SELECT sum(k."calls") FROM "UsageKeyDayRollup" k
              WHERE k."orgId" = ${orgId}::uuid AND k."day" BETWEEN ${first}::date AND ${last}::date) AS org,
             (SELECT sum(k."calls") FROM (${pairs(first, last)}) p
              JOIN "UsageKeyDayRollup" k ON k."orgId" = ${orgId}::uuid AND k."day" = p."day" AND k."keyId" = p.key) AS keys`;
    const spanCalls = inSpan.reduce((n, d) => n + d.calls, 0);
    const orgRead = (Number(cost?.org ?? 0) * (page.limit + 1)) / Math.max(spanCalls, 1);
    const rows =
      orgRead < Number(cost?.keys ?? 0)
        ? await query(Prisma.sql`
            SELECT ${sql.columns} FROM "UsageEvent" x
            WHERE ${sql.where} AND x."occurredAt" >= ${utcTimestamp(new Date(since))}::timestamp
            ORDER BY ${sql.order} LIMIT ${page.limit + 1}`)
        : await throughPairs(inSpan, since);
    if (rows.length > page.limit || since <= page.startAt.getTime()) return rows;
    return throughPairs(days, page.startAt.getTime());
  }

  /** The sessions of the page's ledger calls, by call id, from their trail steps (the ("orgId", "callId") index). */
  private async sessionsOf(orgId: string, rows: RawCallRow[]): Promise<Map<string, string>> {
    const callIds = rows.filter((r) => r.outcome !== 'REFUSED').map((r) => r.id);
    if (callIds.length === 0) return new Map();
    const steps = await this.prisma.reports.trailEvent.findMany({
      where: { orgId, callId: { in: callIds }, sessionId: { not: null } },
      select: { callId: true, sessionId: true },
    });
    return new Map(steps.map((s) => [s.callId!, s.sessionId!]));
  }

  /** Names of the page's teams, users, keys and upstreams, one query each (a page holds few). */
  private async names(rows: RawCallRow[]) {
    const ids = (k: 'teamId' | 'userId' | 'keyId' | 'upstreamId') => [
      ...new Set(rows.map((r) => r[k]).filter((x): x is string => x !== null)),
    ];
    const db = this.prisma.reports;
    const [teams, users, keys, upstreams] = await Promise.all([
      db.team.findMany({ where: { id: { in: ids('teamId') } }, select: { id: true, name: true } }),
      db.user.findMany({ where: { id: { in: ids('userId') } }, select: { id: true, email: true } }),
      db.virtualKey.findMany({ where: { id: { in: ids('keyId') } }, select: { id: true, name: true, prefix: true } }),
      db.upstreamServer.findMany({ where: { id: { in: ids('upstreamId') } }, select: { id: true, namespace: true } }),
    ]);
    return {
      teams: new Map(teams.map((t) => [t.id, t.name])),
      users: new Map(users.map((u) => [u.id, u.email])),
      keys: new Map(keys.map((k) => [k.id, { name: k.name, prefix: k.prefix }])),
      upstreams: new Map(upstreams.map((u) => [u.id, u.namespace])),
    };
  }
}
