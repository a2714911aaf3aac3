import { Injectable } from '@nestjs/common';
import { PrismaService } from '@tollgate/db';

/** Rows one DELETE removes at most: a backlog is worked off in short transactions, not one long lock. */
export const TRAIL_DELETE_BATCH = 5_000;

/**
 * Deletes trail steps older than their organisation's `trailRetentionDays`, in batches, through the
 * ("orgId", "occurredAt") index. Runs with the ledger's upkeep (every 10 minutes); several workers
 * may run it at once (a row is deleted once; the others find it gone).
 */
@Injectable()
export class TrailRetentionService {
  constructor(private readonly prisma: PrismaService) {}

  /** Returns how many steps were deleted. */
  async applyRetention(now: Date = new Date()): Promise<number> {
    let deleted = 0;
    for (;;) {
      const result = await this.prisma.pool.query({
        text: DELETE_EXPIRED_TRAIL,
        values: [now.toISOString(), TRAIL_DELETE_BATCH],
      });
      deleted += result.rowCount ?? 0;
      if ((result.rowCount ?? 0) < TRAIL_DELETE_BATCH) return deleted;
    }
  }
}

const DELETE_EXPIRED_TRAIL = `
  DELETE FROM "TrailEvent" WHERE "id" IN (
    SELECT t."id" FROM "Organization" o
    CROSS JOIN LATERAL (
      SELECT "id" FROM "TrailEvent"
      WHERE "orgId" = o."id" AND "occurredAt" < $1::timestamp(3) - make_interval(days => o."trailRetentionDays")
      LIMIT $2
    ) t
    LIMIT $2
  )`;
