import { Client } from 'pg';

/**
 * What the insert trigger would have added for an org seeded with it off, from its ledger rows: the
 * three report rollups (the zone-change rebuild), the UTC daily rollup and the running totals.
 */
export async function rebuildRollups(db: Client, orgId: string): Promise<void> {
  // Millions of groups: hashed in memory rather than sorted on disk (4 MB by default).
  await db.query(`SET work_mem = '512MB'`);
  await db.query(`SELECT tollgate_rebuild_usage_rollups($1::uuid)`, [orgId]);
  await db.query(`DELETE FROM "UsageDailyRollup" WHERE "orgId" = $1`, [orgId]);
  await db.query(
    `INSERT INTO "UsageDailyRollup" ("orgId", "day", "teamId", "userId", "keyId", "upstreamId", "toolName", "calls", "errors", "costMicros", "outputTokens", "latencyMsSum")
     SELECT e."orgId", e."occurredAt"::date, (array_agg(e."teamId"))[1], (array_agg(e."userId"))[1], e."keyId", e."upstreamId", e."toolName",
            count(*)::int, (count(*) FILTER (WHERE e."outcome" <> 'OK'))::int,
            COALESCE(sum(e."costMicros"), 0), COALESCE(sum(e."outputTokens"), 0), COALESCE(sum(e."latencyMs"), 0)
     FROM "UsageEvent" e WHERE e."orgId" = $1
     GROUP BY e."orgId", e."occurredAt"::date, e."keyId", e."upstreamId", e."toolName"`,
    [orgId],
  );
  await db.query(`DELETE FROM "UsageScopeTotal" WHERE "orgId" = $1`, [orgId]);
  await db.query(
    `INSERT INTO "UsageScopeTotal" ("orgId", "scope", "scopeId", "calls", "costMicros")
     SELECT a."orgId", s.scope, s.id, sum(a.calls)::bigint, sum(a.cost)::bigint
     FROM (SELECT "orgId", "teamId", "userId", "keyId", count(*) AS calls, sum("costMicros") AS cost
           FROM "UsageEvent" WHERE "orgId" = $1 GROUP BY 1, 2, 3, 4) a
     CROSS JOIN LATERAL (VALUES ('ORG'::"BudgetScope", a."orgId"), ('TEAM', a."teamId"), ('USER', a."userId"), ('KEY', a."keyId")) AS s(scope, id)
     GROUP BY 1, 2, 3`,
    [orgId],
  );
  await db.query(`RESET work_mem`);
}
