-- A third report rollup (hand-written), kept by the same insert trigger as the two of
-- 20261128090000_usage_report_rollups: one row per org, local day, key (with its team and user),
-- upstream and tool. It serves what neither of the others holds: breakdowns across both (tool by
-- tag, team by upstream, user by tool) and filters on people and tools together. Function bodies are
-- E'' strings with \073 for each semicolon (the migration runner splits scripts at every one).

CREATE TABLE "UsageCallDayRollup" (
  "orgId" UUID NOT NULL,
  "day" DATE NOT NULL,
  "keyId" UUID NOT NULL,
  "teamId" UUID NOT NULL,
  "userId" UUID NOT NULL,
  "upstreamId" UUID NOT NULL,
  "toolName" TEXT NOT NULL,
  "calls" BIGINT NOT NULL,
  "errors" BIGINT NOT NULL,
  "outputTokens" BIGINT NOT NULL,
  "costMicros" BIGINT NOT NULL,
  CONSTRAINT "UsageCallDayRollup_pkey" PRIMARY KEY ("orgId", "day", "keyId", "teamId", "userId", "upstreamId", "toolName")
);

-- A team admin's and a member's reports read one team's or one user's rows of the range.
CREATE INDEX "UsageCallDayRollup_orgId_teamId_day_idx" ON "UsageCallDayRollup" ("orgId", "teamId", "day");
CREATE INDEX "UsageCallDayRollup_orgId_userId_day_idx" ON "UsageCallDayRollup" ("orgId", "userId", "day");

CREATE OR REPLACE FUNCTION tollgate_usage_rollups_on_insert() RETURNS trigger LANGUAGE plpgsql AS E'
DECLARE
  r RECORD\073
  covered TEXT\073
BEGIN
  FOR r IN
    SELECT DISTINCT n."orgId" AS org_id, COALESCE(o."timeZone", ''UTC'') AS zone
    FROM new_rows n LEFT JOIN "Organization" o ON o."id" = n."orgId" ORDER BY 1
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

  INSERT INTO "UsageKeyDayRollup" ("orgId", "day", "keyId", "teamId", "userId", "calls", "errors", "outputTokens", "costMicros")
  SELECT n."orgId", ((n."occurredAt" AT TIME ZONE ''UTC'') AT TIME ZONE COALESCE(o."timeZone", ''UTC''))::date, n."keyId", n."teamId", n."userId",
         count(*), count(*) FILTER (WHERE n."outcome" <> ''OK''), COALESCE(sum(n."outputTokens"), 0), COALESCE(sum(n."costMicros"), 0)
  FROM new_rows n LEFT JOIN "Organization" o ON o."id" = n."orgId"
  GROUP BY 1, 2, 3, 4, 5
  ORDER BY 1, 2, 3, 4, 5
  ON CONFLICT ("orgId", "day", "keyId", "teamId", "userId") DO UPDATE SET
    "calls" = "UsageKeyDayRollup"."calls" + EXCLUDED."calls",
    "errors" = "UsageKeyDayRollup"."errors" + EXCLUDED."errors",
    "outputTokens" = "UsageKeyDayRollup"."outputTokens" + EXCLUDED."outputTokens",
    "costMicros" = "UsageKeyDayRollup"."costMicros" + EXCLUDED."costMicros"\073

  INSERT INTO "UsageToolDayRollup" ("orgId", "day", "upstreamId", "toolName", "calls", "errors", "outputTokens", "costMicros")
  SELECT n."orgId", ((n."occurredAt" AT TIME ZONE ''UTC'') AT TIME ZONE COALESCE(o."timeZone", ''UTC''))::date, n."upstreamId", n."toolName",
         count(*), count(*) FILTER (WHERE n."outcome" <> ''OK''), COALESCE(sum(n."outputTokens"), 0), COALESCE(sum(n."costMicros"), 0)
  FROM new_rows n LEFT JOIN "Organization" o ON o."id" = n."orgId"
  GROUP BY 1, 2, 3, 4
  ORDER BY 1, 2, 3, 4
  ON CONFLICT ("orgId", "day", "upstreamId", "toolName") DO UPDATE SET
    "calls" = "UsageToolDayRollup"."calls" + EXCLUDED."calls",
    "errors" = "UsageToolDayRollup"."errors" + EXCLUDED."errors",
    "outputTokens" = "UsageToolDayRollup"."outputTokens" + EXCLUDED."outputTokens",
    "costMicros" = "UsageToolDayRollup"."costMicros" + EXCLUDED."costMicros"\073

  INSERT INTO "UsageCallDayRollup" ("orgId", "day", "keyId", "teamId", "userId", "upstreamId", "toolName", "calls", "errors", "outputTokens", "costMicros")
  SELECT n."orgId", ((n."occurredAt" AT TIME ZONE ''UTC'') AT TIME ZONE COALESCE(o."timeZone", ''UTC''))::date, n."keyId", n."teamId", n."userId", n."upstreamId", n."toolName",
         count(*), count(*) FILTER (WHERE n."outcome" <> ''OK''), COALESCE(sum(n."outputTokens"), 0), COALESCE(sum(n."costMicros"), 0)
  FROM new_rows n LEFT JOIN "Organization" o ON o."id" = n."orgId"
  GROUP BY 1, 2, 3, 4, 5, 6, 7
  ORDER BY 1, 2, 3, 4, 5, 6, 7
  ON CONFLICT ("orgId", "day", "keyId", "teamId", "userId", "upstreamId", "toolName") DO UPDATE SET
    "calls" = "UsageCallDayRollup"."calls" + EXCLUDED."calls",
    "errors" = "UsageCallDayRollup"."errors" + EXCLUDED."errors",
    "outputTokens" = "UsageCallDayRollup"."outputTokens" + EXCLUDED."outputTokens",
    "costMicros" = "UsageCallDayRollup"."costMicros" + EXCLUDED."costMicros"\073
  RETURN NULL\073
END ';

-- Recomputes one org's three rollups from the ledger in its current zone (after a zone change).
CREATE OR REPLACE FUNCTION tollgate_rebuild_usage_rollups(target UUID) RETURNS void LANGUAGE plpgsql AS E'
DECLARE
  zone TEXT\073
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended(''tollgate:usage-rollup:'' || target::text, 0))\073
  SELECT o."timeZone" INTO zone FROM "Organization" o WHERE o."id" = target\073
  zone := COALESCE(zone, ''UTC'')\073
  DELETE FROM "UsageKeyDayRollup" WHERE "orgId" = target\073
  DELETE FROM "UsageToolDayRollup" WHERE "orgId" = target\073
  DELETE FROM "UsageCallDayRollup" WHERE "orgId" = target\073
  INSERT INTO "UsageKeyDayRollup" ("orgId", "day", "keyId", "teamId", "userId", "calls", "errors", "outputTokens", "costMicros")
  SELECT e."orgId", ((e."occurredAt" AT TIME ZONE ''UTC'') AT TIME ZONE zone)::date, e."keyId", e."teamId", e."userId",
         count(*), count(*) FILTER (WHERE e."outcome" <> ''OK''), COALESCE(sum(e."outputTokens"), 0), COALESCE(sum(e."costMicros"), 0)
  FROM "UsageEvent" e WHERE e."orgId" = target GROUP BY 1, 2, 3, 4, 5\073
  INSERT INTO "UsageToolDayRollup" ("orgId", "day", "upstreamId", "toolName", "calls", "errors", "outputTokens", "costMicros")
  SELECT e."orgId", ((e."occurredAt" AT TIME ZONE ''UTC'') AT TIME ZONE zone)::date, e."upstreamId", e."toolName",
         count(*), count(*) FILTER (WHERE e."outcome" <> ''OK''), COALESCE(sum(e."outputTokens"), 0), COALESCE(sum(e."costMicros"), 0)
  FROM "UsageEvent" e WHERE e."orgId" = target GROUP BY 1, 2, 3, 4\073
  INSERT INTO "UsageCallDayRollup" ("orgId", "day", "keyId", "teamId", "userId", "upstreamId", "toolName", "calls", "errors", "outputTokens", "costMicros")
  SELECT e."orgId", ((e."occurredAt" AT TIME ZONE ''UTC'') AT TIME ZONE zone)::date, e."keyId", e."teamId", e."userId", e."upstreamId", e."toolName",
         count(*), count(*) FILTER (WHERE e."outcome" <> ''OK''), COALESCE(sum(e."outputTokens"), 0), COALESCE(sum(e."costMicros"), 0)
  FROM "UsageEvent" e WHERE e."orgId" = target GROUP BY 1, 2, 3, 4, 5, 6, 7\073
  INSERT INTO "UsageRollupCoverage" ("orgId", "timeZone", "builtAt") VALUES (target, zone, CURRENT_TIMESTAMP)
  ON CONFLICT ("orgId") DO UPDATE SET "timeZone" = EXCLUDED."timeZone", "builtAt" = EXCLUDED."builtAt"\073
END ';

-- Backfill for the ledger already there, in the zone each org's other rollups are in. The share
-- lock keeps new ledger rows out until this commits (a batch written in between would otherwise be
-- counted by the new trigger and again here), orgs whose rollups are stale (NULL zone) are rebuilt,
-- all three rollups, by the worker's rollup job.
DO E'
DECLARE c RECORD\073
BEGIN
  LOCK TABLE "UsageEvent" IN SHARE MODE\073
  FOR c IN SELECT "orgId", "timeZone" FROM "UsageRollupCoverage" WHERE "timeZone" IS NOT NULL LOOP
    DELETE FROM "UsageCallDayRollup" WHERE "orgId" = c."orgId"\073
    INSERT INTO "UsageCallDayRollup" ("orgId", "day", "keyId", "teamId", "userId", "upstreamId", "toolName", "calls", "errors", "outputTokens", "costMicros")
    SELECT e."orgId", ((e."occurredAt" AT TIME ZONE ''UTC'') AT TIME ZONE c."timeZone")::date, e."keyId", e."teamId", e."userId", e."upstreamId", e."toolName",
           count(*), count(*) FILTER (WHERE e."outcome" <> ''OK''), COALESCE(sum(e."outputTokens"), 0), COALESCE(sum(e."costMicros"), 0)
    FROM "UsageEvent" e WHERE e."orgId" = c."orgId" GROUP BY 1, 2, 3, 4, 5, 6, 7\073
  END LOOP\073
END ';
