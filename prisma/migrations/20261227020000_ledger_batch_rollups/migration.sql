-- The ledger's insert path made cheaper per event (hand-written: statement triggers with transition
-- tables). Function bodies are E'' strings with \073 for each semicolon: the migration runner splits
-- scripts at every one.
--
-- - One trigger instead of two: "UsageEvent_scope_totals" is dropped and its running totals are
--   added by "UsageEvent_report_rollups", in the same statement as the four rollups. The batch is
--   read once: grouped at the finest grain every rollup needs (org, local day, UTC day, key, team,
--   user, upstream, tool), a few hundred groups for a thousand events, and each rollup and the
--   totals are summed from those groups instead of from every row (before: five sorts of the
--   batch, four joins to the organisations). What each rollup adds per batch is unchanged.
-- - The rollups and the running totals leave room on each page (fillfactor 70) so the upsert that
--   adds a batch to a row can write its new version on the same page without touching any index
--   (a HOT update): a row of today is updated by every batch, and without room each update added an
--   entry to every index of the table, which the next upserts then had to step over. The key
--   rollup's indexes no longer carry "costMicros" (an updated column in an index rules out HOT
--   updates): budget sums read it from the rows the index finds.
-- - Lock order is kept: the per-org rollup locks first, then the rollups, then the totals, each in
--   key order.

CREATE OR REPLACE FUNCTION tollgate_usage_rollups_on_insert() RETURNS trigger LANGUAGE plpgsql AS E'
DECLARE
  r RECORD\073
  covered TEXT\073
BEGIN
  FOR r IN
    SELECT n."orgId" AS org_id, COALESCE(min(o."timeZone"), ''UTC'') AS zone
    FROM new_rows n LEFT JOIN "Organization" o ON o."id" = n."orgId" GROUP BY 1 ORDER BY 1
  LOOP
    -- A rebuild holds this lock exclusively: the batch lands either before its snapshot or after it.
    PERFORM pg_advisory_xact_lock_shared(hashtextextended(''tollgate:usage-rollup:'' || r.org_id::text, 0))\073
    SELECT c."timeZone" INTO covered FROM "UsageRollupCoverage" c WHERE c."orgId" = r.org_id\073
    IF NOT FOUND THEN
      INSERT INTO "UsageRollupCoverage" ("orgId", "timeZone") VALUES (r.org_id, r.zone) ON CONFLICT ("orgId") DO NOTHING\073
    ELSIF covered IS DISTINCT FROM r.zone THEN
      UPDATE "UsageRollupCoverage" SET "timeZone" = NULL WHERE "orgId" = r.org_id AND "timeZone" IS NOT NULL\073
    END IF\073
  END LOOP\073

  WITH g AS MATERIALIZED (
    SELECT n."orgId" AS org, ((n."occurredAt" AT TIME ZONE ''UTC'') AT TIME ZONE COALESCE(o."timeZone", ''UTC''))::date AS day,
           n."occurredAt"::date AS utc_day, n."keyId" AS key, n."teamId" AS team, n."userId" AS usr, n."upstreamId" AS up, n."toolName" AS tool,
           count(*) AS calls, count(*) FILTER (WHERE n."outcome" <> ''OK'') AS errors,
           COALESCE(sum(n."outputTokens"), 0) AS tokens, COALESCE(sum(n."costMicros"), 0) AS cost, COALESCE(sum(n."latencyMs"), 0) AS latency
    FROM new_rows n LEFT JOIN "Organization" o ON o."id" = n."orgId"
    GROUP BY 1, 2, 3, 4, 5, 6, 7, 8
  ),
  key_days AS (
    INSERT INTO "UsageKeyDayRollup" ("orgId", "day", "keyId", "teamId", "userId", "calls", "errors", "outputTokens", "costMicros")
    SELECT org, day, key, team, usr, sum(calls), sum(errors), sum(tokens), sum(cost)
    FROM g GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5
    ON CONFLICT ("orgId", "day", "keyId", "teamId", "userId") DO UPDATE SET
      "calls" = "UsageKeyDayRollup"."calls" + EXCLUDED."calls",
      "errors" = "UsageKeyDayRollup"."errors" + EXCLUDED."errors",
      "outputTokens" = "UsageKeyDayRollup"."outputTokens" + EXCLUDED."outputTokens",
      "costMicros" = "UsageKeyDayRollup"."costMicros" + EXCLUDED."costMicros"
  ),
  tool_days AS (
    INSERT INTO "UsageToolDayRollup" ("orgId", "day", "upstreamId", "toolName", "calls", "errors", "outputTokens", "costMicros")
    SELECT org, day, up, tool, sum(calls), sum(errors), sum(tokens), sum(cost)
    FROM g GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
    ON CONFLICT ("orgId", "day", "upstreamId", "toolName") DO UPDATE SET
      "calls" = "UsageToolDayRollup"."calls" + EXCLUDED."calls",
      "errors" = "UsageToolDayRollup"."errors" + EXCLUDED."errors",
      "outputTokens" = "UsageToolDayRollup"."outputTokens" + EXCLUDED."outputTokens",
      "costMicros" = "UsageToolDayRollup"."costMicros" + EXCLUDED."costMicros"
  ),
  call_days AS (
    INSERT INTO "UsageCallDayRollup" ("orgId", "day", "keyId", "teamId", "userId", "upstreamId", "toolName", "calls", "errors", "outputTokens", "costMicros")
    SELECT org, day, key, team, usr, up, tool, sum(calls), sum(errors), sum(tokens), sum(cost)
    FROM g GROUP BY 1, 2, 3, 4, 5, 6, 7 ORDER BY 1, 2, 3, 4, 5, 6, 7
    ON CONFLICT ("orgId", "day", "keyId", "teamId", "userId", "upstreamId", "toolName") DO UPDATE SET
      "calls" = "UsageCallDayRollup"."calls" + EXCLUDED."calls",
      "errors" = "UsageCallDayRollup"."errors" + EXCLUDED."errors",
      "outputTokens" = "UsageCallDayRollup"."outputTokens" + EXCLUDED."outputTokens",
      "costMicros" = "UsageCallDayRollup"."costMicros" + EXCLUDED."costMicros"
  ),
  -- UTC days, a key belongs to one team and one user, the first seen stays.
  utc_days AS (
    INSERT INTO "UsageDailyRollup" ("orgId", "day", "teamId", "userId", "keyId", "upstreamId", "toolName", "calls", "errors", "costMicros", "outputTokens", "latencyMsSum")
    SELECT org, utc_day, (array_agg(team))[1], (array_agg(usr))[1], key, up, tool,
           sum(calls)::int, sum(errors)::int, sum(cost), sum(tokens), sum(latency)
    FROM g GROUP BY org, utc_day, key, up, tool ORDER BY 1, 2, 5, 6, 7
    ON CONFLICT ("orgId", "day", "keyId", "upstreamId", "toolName") DO UPDATE SET
      "calls" = "UsageDailyRollup"."calls" + EXCLUDED."calls",
      "errors" = "UsageDailyRollup"."errors" + EXCLUDED."errors",
      "costMicros" = "UsageDailyRollup"."costMicros" + EXCLUDED."costMicros",
      "outputTokens" = "UsageDailyRollup"."outputTokens" + EXCLUDED."outputTokens",
      "latencyMsSum" = "UsageDailyRollup"."latencyMsSum" + EXCLUDED."latencyMsSum"
  ),
  totals AS (
    INSERT INTO "UsageScopeTotal" ("orgId", "scope", "scopeId", "calls", "costMicros")
    SELECT g.org, s.scope, s.id, sum(g.calls), sum(g.cost)
    FROM g CROSS JOIN LATERAL (VALUES (''ORG''::"BudgetScope", g.org), (''TEAM'', g.team), (''USER'', g.usr), (''KEY'', g.key)) AS s(scope, id)
    GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
    ON CONFLICT ("orgId", "scope", "scopeId") DO UPDATE SET
      "calls" = "UsageScopeTotal"."calls" + EXCLUDED."calls",
      "costMicros" = "UsageScopeTotal"."costMicros" + EXCLUDED."costMicros"
  )
  SELECT 1 INTO r\073
  RETURN NULL\073
END ';

DROP TRIGGER "UsageEvent_scope_totals" ON "UsageEvent";
DROP FUNCTION tollgate_usage_totals_on_insert();

ALTER TABLE "UsageKeyDayRollup" SET (fillfactor = 70);
ALTER TABLE "UsageToolDayRollup" SET (fillfactor = 70);
ALTER TABLE "UsageCallDayRollup" SET (fillfactor = 70);
ALTER TABLE "UsageDailyRollup" SET (fillfactor = 70);
ALTER TABLE "UsageScopeTotal" SET (fillfactor = 70);

DROP INDEX "UsageKeyDayRollup_orgId_teamId_day_idx";
DROP INDEX "UsageKeyDayRollup_orgId_userId_day_idx";
DROP INDEX "UsageKeyDayRollup_orgId_keyId_day_idx";
CREATE INDEX "UsageKeyDayRollup_orgId_teamId_day_idx" ON "UsageKeyDayRollup" ("orgId", "teamId", "day");
CREATE INDEX "UsageKeyDayRollup_orgId_userId_day_idx" ON "UsageKeyDayRollup" ("orgId", "userId", "day");
CREATE INDEX "UsageKeyDayRollup_orgId_keyId_day_idx" ON "UsageKeyDayRollup" ("orgId", "keyId", "day");
