import { Injectable, Logger } from '@nestjs/common';
import { PrismaService } from '@tollgate/db';

/**
 * The ledger's rollups (libs/usage/src/sql/usage-rollups.sql): kept by its insert trigger, and
 * rebuilt from the ledger by one SQL function, `tollgate_rebuild_usage_rollups`, after a zone
 * change or on an admin's request (a repair). Nothing else here computes a rollup.
 */
@Injectable()
export class UsageRollupService {
  private readonly logger = new Logger(UsageRollupService.name);

  constructor(private readonly prisma: PrismaService) {}

  /**
   * Rebuilds an org's rollups from the ledger: those of `day` (YYYY-MM-DD: the org's local day in
   * the report rollups, the UTC day in UsageDailyRollup), or all of them (null). Running it again,
   * late or twice, gives the same rows.
   */
  async rebuild(orgId: string, day: string | null): Promise<void> {
    await this.prisma.$executeRaw`
      SELECT 1 FROM (SELECT tollgate_rebuild_usage_rollups(${orgId}::uuid, ${day}::date)) AS rebuilt`;
    this.logger.log(`rollups of org ${orgId} rebuilt from the ledger: ${day ?? 'every day'}`);
  }

  /**
   * The report rollups are by local day: after an org's zone changed, reports read the ledger until
   * this rebuilds the org's rollups in the new zone. Returns the orgs rebuilt.
   */
  async rebuildStaleReportRollups(orgId: string | null): Promise<string[]> {
    const stale = await this.prisma.$queryRaw<{ orgId: string }[]>`
      SELECT c."orgId" FROM "UsageRollupCoverage" c JOIN "Organization" o ON o."id" = c."orgId"
      WHERE c."timeZone" IS DISTINCT FROM o."timeZone" AND (${orgId}::uuid IS NULL OR c."orgId" = ${orgId}::uuid)`;
    for (const { orgId: id } of stale) {
      await this.rebuild(id, null);
    }
    return stale.map((s) => s.orgId);
  }
}
