import { Injectable, Logger } from '@nestjs/common';
import { Prisma, PrismaService } from '@tollgate/db';

/** One month retention removed from the ledger. */
export interface DroppedMonth {
  /** First day of the UTC month, YYYY-MM-DD. */
  month: string;
  rows: bigint;
  costMicros: bigint;
  archivedTo: string | null;
}

/** The UTC month containing `at`, `months` later (negative: earlier), as YYYY-MM-01. */
export function utcMonth(at: Date, months = 0): string {
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + months, 1)).toISOString().slice(0, 10);
}

/**
 * The ledger's monthly partitions (`tollgate_ensure_partition` in
 * libs/usage/src/sql/ledger-partitions.sql): created ahead of time, and dropped by retention with
 * their totals carried into the closing balance, so every budget and all-time sum stays what it was.
 */
@Injectable()
export class LedgerPartitionsService {
  private readonly logger = new Logger(LedgerPartitionsService.name);

  constructor(private readonly prisma: PrismaService) {}

  /**
   * The partitions of the current UTC month and `ahead` months after it (idempotent, safe from any
   * number of workers at once). Rows of those months waiting in the default partition move in.
   */
  async ensureAhead(now: Date, ahead: number): Promise<string[]> {
    const made: string[] = [];
    for (let i = 0; i <= ahead; i++) {
      const [row] = await this.prisma.$queryRaw<{ part: string }[]>`
        SELECT tollgate_ensure_partition('UsageEvent', ${utcMonth(now, i)}::date) AS part`;
      made.push(row.part);
      // Refused calls (migration 20261226120000_refused_calls) are partitioned by the same months.
      await this.prisma.$queryRaw`SELECT tollgate_ensure_partition('RefusedCall', ${utcMonth(now, i)}::date)`;
    }
    return made;
  }

  /** The UTC months that have a ledger partition, oldest first (YYYY-MM-01). */
  async months(): Promise<string[]> {
    return (await this.partitionsOf('UsageEvent')).map((p) => p.month);
  }

  /** The monthly partitions of a partitioned table (named `<table>_pYYYY_MM`), oldest first. */
  private async partitionsOf(table: 'UsageEvent' | 'RefusedCall'): Promise<{ part: string; month: string }[]> {
    const suffix = table.length + 3; // where YYYY_MM starts in the name (1-based)
    return this.prisma.$queryRaw<{ part: string; month: string }[]>`
      SELECT c.relname AS part, to_char(to_date(substr(c.relname, ${suffix}::int), 'YYYY_MM'), 'YYYY-MM-DD') AS month
      FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
      WHERE i.inhparent = ${`"${table}"`}::regclass AND c.relname ~ ${`^${table}_p[0-9]{4}_[0-9]{2}$`}
      ORDER BY 1`;
  }

  /**
   * Drops every month before the `keepMonths` whole UTC months preceding the current one (0 keeps
   * everything). Each month goes in one transaction: see dropMonth.
   */
  async applyRetention(now: Date, keepMonths: number, archiveTable?: string): Promise<DroppedMonth[]> {
    if (keepMonths <= 0) return [];
    const cut = utcMonth(now, -keepMonths);
    const out: DroppedMonth[] = [];
    for (const month of await this.months()) if (month < cut) out.push(await this.dropMonth(month, archiveTable));
    await this.dropRefusedMonthsBefore(cut);
    return out;
  }

  /**
   * Drops the months of refused calls before `cut` (YYYY-MM-01) with the ledger's: the per-call rows
   * go, their counts stay in RefusedCallRollup (which retention does not touch).
   */
  async dropRefusedMonthsBefore(cut: string): Promise<void> {
    for (const { part, month } of await this.partitionsOf('RefusedCall')) {
      if (month >= cut) continue;
      await this.prisma.$executeRaw`DROP TABLE ${Prisma.raw(`"${part}"`)}`;
      this.logger.log(`refused calls of ${month.slice(0, 7)} dropped (their counts stay in the rollup)`);
    }
    await this.prisma.$executeRaw`DELETE FROM "RefusedCall_default" WHERE "occurredAt" < ${cut}::timestamp`;
  }

  /**
   * Removes one month from the ledger: its partition (and any of its rows in the default partition),
   * after adding its totals to UsageLedgerClosing and subtracting them from the report rollups
   * (in the zone each org's rollups are in), so closing + rollups still equal every event written.
   * The partition is locked first: a late event for the month waits and then lands in the default
   * partition, counted in the rollups as usual. Orgs whose rollups are void (a zone change not
   * rebuilt yet) are left alone in the rollups: their rebuild reads the ledger that remains.
   */
  async dropMonth(month: string, archiveTable?: string): Promise<DroppedMonth> {
    const part = `UsageEvent_p${month.slice(0, 4)}_${month.slice(5, 7)}`;
    const from = `${month} 00:00:00`;
    const to = `${utcMonth(new Date(`${month}T00:00:00Z`), 1)} 00:00:00`;
    const partSql = Prisma.raw(`"${part}"`);
    const result = await this.prisma.$transaction(
      async (tx) => {
        await tx.$executeRaw`LOCK TABLE ${partSql} IN EXCLUSIVE MODE`;
        // The month's rows, from its partition and the default one, in a scratch table.
        await tx.$executeRaw`CREATE TEMP TABLE tollgate_dropping ON COMMIT DROP AS SELECT * FROM ${partSql}`;
        await tx.$executeRaw`
          WITH moved AS (
            DELETE FROM "UsageEvent_default" WHERE "occurredAt" >= ${from}::timestamp AND "occurredAt" < ${to}::timestamp RETURNING *
          ) INSERT INTO tollgate_dropping SELECT * FROM moved`;
        const orgs = await tx.$queryRaw<{ orgId: string }[]>`SELECT DISTINCT "orgId" FROM tollgate_dropping ORDER BY 1`;
        const orgIds = orgs.map((o) => o.orgId);
        // As a rebuild does: no insert trigger adds to these orgs' rollups until this commits.
        for (const { orgId } of orgs)
          await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtextextended(${`tollgate:usage-rollup:${orgId}`}, 0))`;
        await tx.$executeRaw`
          INSERT INTO "UsageLedgerClosing" ("orgId", "keyId", "teamId", "userId", "upstreamId", "toolName", "calls", "errors", "outputTokens", "costMicros")
          SELECT "orgId", "keyId", "teamId", "userId", "upstreamId", "toolName", count(*), count(*) FILTER (WHERE "outcome" <> 'OK'),
                 COALESCE(sum("outputTokens"), 0), COALESCE(sum("costMicros"), 0)
          FROM tollgate_dropping GROUP BY 1, 2, 3, 4, 5, 6
          ON CONFLICT ("orgId", "keyId", "teamId", "userId", "upstreamId", "toolName") DO UPDATE SET
            "calls" = "UsageLedgerClosing"."calls" + EXCLUDED."calls",
            "errors" = "UsageLedgerClosing"."errors" + EXCLUDED."errors",
            "outputTokens" = "UsageLedgerClosing"."outputTokens" + EXCLUDED."outputTokens",
            "costMicros" = "UsageLedgerClosing"."costMicros" + EXCLUDED."costMicros"`;
        for (const rollup of ROLLUPS) {
          await tx.$executeRaw(subtractFromRollup(rollup));
          await tx.$executeRaw(deleteEmptied(rollup, orgIds, month, to.slice(0, 10)));
        }
        const [totals] = await tx.$queryRaw<{ rows: bigint; cost: bigint }[]>`
          SELECT count(*)::bigint AS rows, COALESCE(sum("costMicros"), 0)::bigint AS cost FROM tollgate_dropping`;
        if (archiveTable) {
          const archive = Prisma.raw(`"${archiveTable}"`);
          await tx.$executeRaw`CREATE TABLE IF NOT EXISTS ${archive} (LIKE "UsageEvent" INCLUDING DEFAULTS)`;
          // An archive made before the ledger had "traceId" gets it, so SELECT * lines up with it.
          await tx.$executeRaw`ALTER TABLE ${archive} ADD COLUMN IF NOT EXISTS "traceId" TEXT`;
          await tx.$executeRaw`INSERT INTO ${archive} SELECT * FROM tollgate_dropping`;
        }
        await tx.$executeRaw`
          INSERT INTO "UsageLedgerRetention" ("month", "rangeStart", "rangeEnd", "rows", "costMicros", "archivedTo")
          VALUES (${month}::date, ${from}::timestamp, ${to}::timestamp, ${totals.rows}, ${totals.cost}, ${archiveTable ?? null})
          ON CONFLICT ("month") DO UPDATE SET "rows" = "UsageLedgerRetention"."rows" + EXCLUDED."rows",
            "costMicros" = "UsageLedgerRetention"."costMicros" + EXCLUDED."costMicros", "droppedAt" = EXCLUDED."droppedAt"`;
        await tx.$executeRaw`ALTER TABLE "UsageEvent" DETACH PARTITION ${partSql}`;
        await tx.$executeRaw`DROP TABLE ${partSql}`;
        return totals;
      },
      { timeout: 10 * 60_000, maxWait: 60_000 },
    );
    this.logger.log(
      `ledger month ${month} dropped: ${result.rows} rows, ${result.cost} micro-units carried into the closing balance${archiveTable ? `, archived to ${archiveTable}` : ''}`,
    );
    return { month, rows: result.rows, costMicros: result.cost, archivedTo: archiveTable ?? null };
  }
}

/**
 * The report rollups: table, its period column (a local day, or the first day of a local month or
 * dekad: days 1-10, 11-20, 21 to the end), key columns (besides org and period).
 */
const ROLLUPS = [
  { table: 'UsageKeyDayRollup', period: 'day', keys: ['keyId', 'teamId', 'userId'] },
  { table: 'UsageToolDayRollup', period: 'day', keys: ['upstreamId', 'toolName'] },
  { table: 'UsageCallDayRollup', period: 'day', keys: ['keyId', 'teamId', 'userId', 'upstreamId', 'toolName'] },
  { table: 'UsageCallDekadRollup', period: 'dekad', keys: ['keyId', 'teamId', 'userId', 'upstreamId', 'toolName'] },
  { table: 'UsageCallMonthRollup', period: 'month', keys: ['keyId', 'teamId', 'userId', 'upstreamId', 'toolName'] },
  // The same per user (a user's keys summed).
  { table: 'UsageUserCallDekadRollup', period: 'dekad', keys: ['userId', 'teamId', 'upstreamId', 'toolName'] },
  { table: 'UsageUserCallMonthRollup', period: 'month', keys: ['userId', 'teamId', 'upstreamId', 'toolName'] },
  // Keyed by the key's tag set now, as the insert trigger and a tag change keep it.
  { table: 'UsageToolTagDayRollup', period: 'day', keys: ['upstreamId', 'toolName', 'tags'] },
  { table: 'UsageToolTagMonthRollup', period: 'month', keys: ['upstreamId', 'toolName', 'tags'] },
  { table: 'UsageTeamToolTagDayRollup', period: 'day', keys: ['teamId', 'upstreamId', 'toolName', 'tags'] },
  { table: 'UsageTeamToolTagMonthRollup', period: 'month', keys: ['teamId', 'upstreamId', 'toolName', 'tags'] },
] as const;

/** A rollup key column of a dropped row (alias e; `tags` from its key, joined as vk). */
const keyColumn = (k: string) => (k === 'tags' ? `COALESCE(vk."tags", ARRAY[]::text[])` : `e."${k}"`);

/** Subtracts the dropped rows from one rollup, by the org's local day in its rollups' zone. */
function subtractFromRollup(r: (typeof ROLLUPS)[number]): Prisma.Sql {
  const keys: readonly string[] = r.keys;
  const cols = keys.map((k) => `${keyColumn(k)} AS "${k}"`).join(', ');
  const groups = keys.map((_, i) => String(i + 3)).join(', ');
  const on = ['orgId', r.period, ...keys].map((k) => `t."${k}" = d."${k}"`).join(' AND ');
  const tagJoin = keys.includes('tags') ? `LEFT JOIN "VirtualKey" vk ON vk."id" = e."keyId"` : '';
  const day = `((e."occurredAt" AT TIME ZONE 'UTC') AT TIME ZONE c."timeZone")::date`;
  const period = {
    day,
    month: `date_trunc('month', ${day})::date`,
    // As the insert trigger computes it (libs/usage/src/sql/usage-rollups.sql).
    dekad: `date_trunc('month', ${day})::date + LEAST((extract(day FROM ${day})::int - 1) / 10, 2) * 10`,
  }[r.period];
  return Prisma.sql`
    WITH d AS (
      SELECT e."orgId", ${Prisma.raw(period)} AS ${Prisma.raw(`"${r.period}"`)}, ${Prisma.raw(cols)},
             count(*) AS calls, count(*) FILTER (WHERE e."outcome" <> 'OK') AS errors,
             COALESCE(sum(e."outputTokens"), 0) AS "outputTokens", COALESCE(sum(e."costMicros"), 0) AS "costMicros"
      FROM tollgate_dropping e JOIN "UsageRollupCoverage" c ON c."orgId" = e."orgId" AND c."timeZone" IS NOT NULL
        ${Prisma.raw(tagJoin)}
      GROUP BY e."orgId", 2, ${Prisma.raw(groups)}
    )
    UPDATE ${Prisma.raw(`"${r.table}"`)} t SET "calls" = t."calls" - d.calls, "errors" = t."errors" - d.errors,
      "outputTokens" = t."outputTokens" - d."outputTokens", "costMicros" = t."costMicros" - d."costMicros"
    FROM d WHERE ${Prisma.raw(on)}`;
}

/** Rollup rows the subtraction emptied (the insert trigger never writes one with no calls). */
function deleteEmptied(r: (typeof ROLLUPS)[number], orgIds: string[], from: string, to: string): Prisma.Sql {
  // A UTC month's rows fall on local days from the day before it to the day after it (their months
  // and dekads too; a dekad starts in the month of the day before, at the earliest).
  const period = Prisma.raw(`"${r.period}"`);
  const lo =
    r.period === 'day' ? Prisma.sql`${from}::date - 1` : Prisma.sql`date_trunc('month', ${from}::date - 1)::date`;
  return Prisma.sql`
    DELETE FROM ${Prisma.raw(`"${r.table}"`)}
    WHERE "orgId" = ANY(${orgIds}::uuid[]) AND ${period} >= ${lo} AND ${period} <= ${to}::date + 1 AND "calls" = 0`;
}
