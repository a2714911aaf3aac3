import { Injectable, Logger } from '@nestjs/common';
import { PrismaService } from '@tollgate/db';
import { parseUtcDay } from './report-dates';
import { ReportingException, ReportingExceptionCode } from './reporting.exception';

const DAY_MS = 24 * 3600 * 1000;

/**
 * Daily rollups of the ledger (UTC days) for tier scores and dashboards. The ledger's insert
 * trigger keeps them (migration 20261225030000_usage_ledger_partitions); rollupDay recomputes one
 * day from the ledger in one statement (a repair on admin request), so running it again, late or
 * twice, gives the same rows.
 */
@Injectable()
export class UsageRollupService {
  private readonly logger = new Logger(UsageRollupService.name);

  constructor(private readonly prisma: PrismaService) {}

  /** Recomputes the rollup rows of one UTC day, for one organisation or all; returns the rows written. */
  async rollupDay(day: string, orgId: string | null): Promise<number> {
    const start = parseUtcDay(day);
    if (!start)
      throw new ReportingException(ReportingExceptionCode.InvalidQuery, 'day must be a date YYYY-MM-DD', 'day');
    const from = start.toISOString().replace('T', ' ').replace('Z', '');
    const to = new Date(start.getTime() + DAY_MS).toISOString().replace('T', ' ').replace('Z', '');
    // A key belongs to one team and one user, so they are functions of the key; array_agg keeps
    // the statement valid (and the key's row unique) even if that ever stopped being true.
    const written = await this.prisma.$executeRaw`
      INSERT INTO "UsageDailyRollup"
        ("orgId", "day", "teamId", "userId", "keyId", "upstreamId", "toolName", "calls", "errors", "costMicros", "outputTokens", "latencyMsSum")
      SELECT e."orgId", ${day}::date, (array_agg(e."teamId"))[1], (array_agg(e."userId"))[1], e."keyId", e."upstreamId", e."toolName",
             COUNT(*)::int, (COUNT(*) FILTER (WHERE e."outcome" <> 'OK'))::int,
             SUM(e."costMicros")::bigint, SUM(e."outputTokens")::bigint, SUM(e."latencyMs")::bigint
      FROM "UsageEvent" e
      WHERE e."occurredAt" >= ${from}::timestamp AND e."occurredAt" < ${to}::timestamp
        AND (${orgId}::uuid IS NULL OR e."orgId" = ${orgId}::uuid)
      GROUP BY e."orgId", e."keyId", e."upstreamId", e."toolName"
      ON CONFLICT ("orgId", "day", "keyId", "upstreamId", "toolName") DO UPDATE SET
        "teamId" = EXCLUDED."teamId", "userId" = EXCLUDED."userId", "calls" = EXCLUDED."calls", "errors" = EXCLUDED."errors",
        "costMicros" = EXCLUDED."costMicros", "outputTokens" = EXCLUDED."outputTokens", "latencyMsSum" = EXCLUDED."latencyMsSum"
    `;
    this.logger.debug(`rollup of ${day}${orgId ? ` for org ${orgId}` : ''}: ${written} row(s)`);
    return written;
  }

  /**
   * The report rollups (per key, per tool, per key and tool; kept by the ledger's insert trigger) are
   * by local day: after an org's zone changed, reports read the ledger until this rebuilds all three
   * in the new zone. Returns the orgs rebuilt.
   */
  async rebuildStaleReportRollups(orgId: string | null): Promise<string[]> {
    const stale = await this.prisma.$queryRaw<{ orgId: string }[]>`
      SELECT c."orgId" FROM "UsageRollupCoverage" c JOIN "Organization" o ON o."id" = c."orgId"
      WHERE c."timeZone" IS DISTINCT FROM o."timeZone" AND (${orgId}::uuid IS NULL OR c."orgId" = ${orgId}::uuid)`;
    for (const { orgId: id } of stale) {
      await this.prisma.$executeRaw`SELECT 1 FROM (SELECT tollgate_rebuild_usage_rollups(${id}::uuid)) AS rebuilt`;
      this.logger.log(`report rollups of org ${id} rebuilt in its current time zone`);
    }
    return stale.map((s) => s.orgId);
  }
}
