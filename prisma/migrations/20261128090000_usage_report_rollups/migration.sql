-- Report rollups kept by the ledger itself (hand-written). Function bodies are E'' strings with
-- \073 for each semicolon: the migration runner (@prisma/adapter-pg) splits scripts at every one.
-- Spend reports over whole days of the
-- org's zone read these instead of every ledger row: one row per org, local day and key (team,
-- user and tag reports) and per org, local day and tool (upstream and tool reports). An AFTER
-- INSERT trigger adds each inserted batch in the same transaction, so a committed ledger row is
-- in the rollups exactly once (ON CONFLICT DO NOTHING duplicates are not in the transition table).
-- The ledger is append-only: nothing updates or deletes UsageEvent rows.

CREATE TABLE "UsageKeyDayRollup" (
  "orgId" UUID NOT NULL,
  "day" DATE NOT NULL,
  "keyId" UUID NOT NULL,
  "teamId" UUID NOT NULL,
  "userId" UUID NOT NULL,
  "calls" BIGINT NOT NULL,
  "errors" BIGINT NOT NULL,
  "outputTokens" BIGINT NOT NULL,
  "costMicros" BIGINT NOT NULL,
  CONSTRAINT "UsageKeyDayRollup_pkey" PRIMARY KEY ("orgId", "day", "keyId", "teamId", "userId")
);

CREATE TABLE "UsageToolDayRollup" (
  "orgId" UUID NOT NULL,
  "day" DATE NOT NULL,
  "upstreamId" UUID NOT NULL,
  "toolName" TEXT NOT NULL,
  "calls" BIGINT NOT NULL,
  "errors" BIGINT NOT NULL,
  "outputTokens" BIGINT NOT NULL,
  "costMicros" BIGINT NOT NULL,
  CONSTRAINT "UsageToolDayRollup_pkey" PRIMARY KEY ("orgId", "day", "upstreamId", "toolName")
);

-- The zone whose days the org's rollups are in, NULL once the org's zone changed under them
-- (reports then read the ledger until tollgate_rebuild_usage_rollups runs).
CREATE TABLE "UsageRollupCoverage" (
  "orgId" UUID NOT NULL,
  "timeZone" TEXT,
  "builtAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  CONSTRAINT "UsageRollupCoverage_pkey" PRIMARY KEY ("orgId")
);

CREATE FUNCTION tollgate_usage_rollups_on_insert() RETURNS trigger LANGUAGE plpgsql AS E'
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
  RETURN NULL\073
END ';

CREATE TRIGGER "UsageEvent_report_rollups"
  AFTER INSERT ON "UsageEvent" REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION tollgate_usage_rollups_on_insert();

-- Recomputes one org's rollups from the ledger in its current zone (after a zone change).
CREATE FUNCTION tollgate_rebuild_usage_rollups(target UUID) RETURNS void LANGUAGE plpgsql AS E'
DECLARE
  zone TEXT\073
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended(''tollgate:usage-rollup:'' || target::text, 0))\073
  SELECT o."timeZone" INTO zone FROM "Organization" o WHERE o."id" = target\073
  zone := COALESCE(zone, ''UTC'')\073
  DELETE FROM "UsageKeyDayRollup" WHERE "orgId" = target\073
  DELETE FROM "UsageToolDayRollup" WHERE "orgId" = target\073
  INSERT INTO "UsageKeyDayRollup" ("orgId", "day", "keyId", "teamId", "userId", "calls", "errors", "outputTokens", "costMicros")
  SELECT e."orgId", ((e."occurredAt" AT TIME ZONE ''UTC'') AT TIME ZONE zone)::date, e."keyId", e."teamId", e."userId",
         count(*), count(*) FILTER (WHERE e."outcome" <> ''OK''), COALESCE(sum(e."outputTokens"), 0), COALESCE(sum(e."costMicros"), 0)
  FROM "UsageEvent" e WHERE e."orgId" = target GROUP BY 1, 2, 3, 4, 5\073
  INSERT INTO "UsageToolDayRollup" ("orgId", "day", "upstreamId", "toolName", "calls", "errors", "outputTokens", "costMicros")
  SELECT e."orgId", ((e."occurredAt" AT TIME ZONE ''UTC'') AT TIME ZONE zone)::date, e."upstreamId", e."toolName",
         count(*), count(*) FILTER (WHERE e."outcome" <> ''OK''), COALESCE(sum(e."outputTokens"), 0), COALESCE(sum(e."costMicros"), 0)
  FROM "UsageEvent" e WHERE e."orgId" = target GROUP BY 1, 2, 3, 4\073
  INSERT INTO "UsageRollupCoverage" ("orgId", "timeZone", "builtAt") VALUES (target, zone, CURRENT_TIMESTAMP)
  ON CONFLICT ("orgId") DO UPDATE SET "timeZone" = EXCLUDED."timeZone", "builtAt" = EXCLUDED."builtAt"\073
END ';

-- Rollups for the ledger already there (a DO block: the migration runner cannot read a void column).
DO E'
DECLARE org UUID\073
BEGIN
  FOR org IN SELECT DISTINCT "orgId" FROM "UsageEvent" LOOP
    PERFORM tollgate_rebuild_usage_rollups(org)\073
  END LOOP\073
END ';

-- Budget utilisation sums each team's and user's spend over its period: index-only scans.
CREATE INDEX "UsageEvent_orgId_teamId_occurredAt_idx" ON "UsageEvent" ("orgId", "teamId", "occurredAt") INCLUDE ("costMicros");
CREATE INDEX "UsageEvent_orgId_userId_occurredAt_idx" ON "UsageEvent" ("orgId", "userId", "occurredAt") INCLUDE ("costMicros");
