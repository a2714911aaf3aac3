-- The ledger partitioned by month (hand-written, Prisma cannot declare partitions). Function bodies
-- are E'' strings with \073 for each semicolon: the migration runner splits scripts at every one.
--
-- - "UsageEvent" becomes a table partitioned by range on "occurredAt", one partition per UTC month
--   ("UsageEvent_pYYYY_MM") and a default partition ("UsageEvent_default") for rows outside every
--   month created so far. The primary key is ("id", "occurredAt"): Postgres requires the partition
--   key in it. An event id always carries the same "occurredAt" (the edge fixes both when it
--   records the call, every retry resends the same payload), so ON CONFLICT ("id", "occurredAt")
--   still writes an event once.
-- - Indexes: the primary key and ("orgId", "occurredAt") INCLUDE ("costMicros") (reports that read
--   the ledger, budget sums that cannot use the rollups). The ("keyId", "occurredAt"),
--   ("orgId", "teamId", "occurredAt") and ("orgId", "userId", "occurredAt") indexes are gone:
--   budget sums read the rollups now, and each index cost about 100 bytes a row and its WAL. A BRIN
--   index on "occurredAt" (a few pages a partition: rows arrive in time order) serves a day's
--   recompute and the platform report.
-- - tollgate_ensure_usage_partition(month) creates a month's partition (the worker calls it at boot
--   and on its rollup schedule for the months ahead), moving rows the default partition holds.
-- - The insert trigger also keeps "UsageDailyRollup" (UTC days, tier scores), which the
--   usage-rollup job used to recompute by scanning a day of the ledger.
-- - Retention (worker, LEDGER_RETENTION_MONTHS): a dropped month's totals move into
--   "UsageLedgerClosing" and out of the rollups, one "UsageLedgerRetention" row per month dropped.
--
-- Existing rows are copied (in this transaction, with the ledger locked against writes: plan the
-- upgrade for about 10 s per million rows).

-- A month's partition, [month, month + 1) in UTC, returns its name. Rows of that month already in
-- the default partition move into it (they are in the rollups already: no trigger fires). Built
-- beside the ledger and attached, which locks the ledger's writers out only while the default
-- partition is checked, not while the partition is built.
CREATE FUNCTION tollgate_ensure_usage_partition(month DATE) RETURNS TEXT LANGUAGE plpgsql AS E'
DECLARE
  m DATE := date_trunc(''month'', month)::date\073
  part TEXT := ''UsageEvent_p'' || to_char(m, ''YYYY_MM'')\073
BEGIN
  IF to_regclass(format(''%I'', part)) IS NOT NULL THEN RETURN part\073 END IF\073
  PERFORM pg_advisory_xact_lock(hashtextextended(''tollgate:usage-partition'', 0))\073
  IF to_regclass(format(''%I'', part)) IS NOT NULL THEN RETURN part\073 END IF\073
  EXECUTE format(''CREATE TABLE %I (LIKE "UsageEvent" INCLUDING DEFAULTS)'', part)\073
  EXECUTE format(''ALTER TABLE %I ADD CONSTRAINT %I CHECK ("occurredAt" >= %L AND "occurredAt" < %L)'',
    part, part || ''_range'', m::timestamp, (m + interval ''1 month'')::timestamp)\073
  EXECUTE format(''WITH moved AS (DELETE FROM "UsageEvent_default" WHERE "occurredAt" >= %L AND "occurredAt" < %L RETURNING *) INSERT INTO %I SELECT * FROM moved'',
    m::timestamp, (m + interval ''1 month'')::timestamp, part)\073
  EXECUTE format(''ALTER TABLE "UsageEvent" ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)'',
    part, m::timestamp, (m + interval ''1 month'')::timestamp)\073
  EXECUTE format(''ALTER TABLE %I DROP CONSTRAINT %I'', part, part || ''_range'')\073
  RETURN part\073
END ';

-- What retention dropped, per org and the call rollup's grain, so TOTAL budgets (and any sum over
-- all of history) stay exact: closing balance + rollups = every event ever written.
CREATE TABLE "UsageLedgerClosing" (
  "orgId" UUID NOT NULL,
  "keyId" UUID NOT NULL,
  "teamId" UUID NOT NULL,
  "userId" UUID NOT NULL,
  "upstreamId" UUID NOT NULL,
  "toolName" TEXT NOT NULL,
  "calls" BIGINT NOT NULL,
  "errors" BIGINT NOT NULL,
  "outputTokens" BIGINT NOT NULL,
  "costMicros" BIGINT NOT NULL,
  CONSTRAINT "UsageLedgerClosing_pkey" PRIMARY KEY ("orgId", "keyId", "teamId", "userId", "upstreamId", "toolName")
);

-- One row per month retention removed from the ledger (reports over it say so).
CREATE TABLE "UsageLedgerRetention" (
  "month" DATE NOT NULL,
  "rangeStart" TIMESTAMP(3) NOT NULL,
  "rangeEnd" TIMESTAMP(3) NOT NULL,
  "rows" BIGINT NOT NULL,
  "costMicros" BIGINT NOT NULL,
  "archivedTo" TEXT,
  "droppedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  CONSTRAINT "UsageLedgerRetention_pkey" PRIMARY KEY ("month")
);

-- The insert trigger, now on the partitioned ledger (its transition table holds the rows of every
-- partition), also adding to "UsageDailyRollup" (UTC days): the rollup job no longer reads the ledger.
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

  -- UTC days, a key belongs to one team and one user, the first seen stays.
  INSERT INTO "UsageDailyRollup" ("orgId", "day", "teamId", "userId", "keyId", "upstreamId", "toolName", "calls", "errors", "costMicros", "outputTokens", "latencyMsSum")
  SELECT n."orgId", n."occurredAt"::date, (array_agg(n."teamId"))[1], (array_agg(n."userId"))[1], n."keyId", n."upstreamId", n."toolName",
         count(*)::int, (count(*) FILTER (WHERE n."outcome" <> ''OK''))::int,
         COALESCE(sum(n."costMicros"), 0), COALESCE(sum(n."outputTokens"), 0), COALESCE(sum(n."latencyMs"), 0)
  FROM new_rows n
  GROUP BY n."orgId", n."occurredAt"::date, n."keyId", n."upstreamId", n."toolName"
  ORDER BY 1, 2, 5, 6, 7
  ON CONFLICT ("orgId", "day", "keyId", "upstreamId", "toolName") DO UPDATE SET
    "calls" = "UsageDailyRollup"."calls" + EXCLUDED."calls",
    "errors" = "UsageDailyRollup"."errors" + EXCLUDED."errors",
    "costMicros" = "UsageDailyRollup"."costMicros" + EXCLUDED."costMicros",
    "outputTokens" = "UsageDailyRollup"."outputTokens" + EXCLUDED."outputTokens",
    "latencyMsSum" = "UsageDailyRollup"."latencyMsSum" + EXCLUDED."latencyMsSum"\073
  RETURN NULL\073
END ';

-- The conversion, in one statement (the migration runner runs each statement on its own): the old
-- ledger locked against writers, renamed, copied into the partitioned one, dropped, and the
-- trigger moved, all or nothing. A writer waiting on the lock fails and retries (the worker's
-- back-off) against the new table.
DO E'
DECLARE m DATE\073
BEGIN
LOCK TABLE "UsageEvent" IN EXCLUSIVE MODE\073
DROP TRIGGER "UsageEvent_report_rollups" ON "UsageEvent"\073
ALTER TABLE "UsageEvent" RENAME TO "UsageEvent_unpartitioned"\073
ALTER TABLE "UsageEvent_unpartitioned" RENAME CONSTRAINT "UsageEvent_pkey" TO "UsageEvent_unpartitioned_pkey"\073
DROP INDEX "UsageEvent_orgId_occurredAt_idx"\073
DROP INDEX "UsageEvent_keyId_occurredAt_idx"\073
DROP INDEX "UsageEvent_orgId_teamId_occurredAt_idx"\073
DROP INDEX "UsageEvent_orgId_userId_occurredAt_idx"\073

CREATE TABLE "UsageEvent" (
  "id" TEXT NOT NULL,
  "orgId" UUID NOT NULL,
  "teamId" UUID NOT NULL,
  "userId" UUID NOT NULL,
  "keyId" UUID NOT NULL,
  "upstreamId" UUID NOT NULL,
  "toolName" TEXT NOT NULL,
  "outcome" "UsageOutcome" NOT NULL,
  "costMicros" BIGINT NOT NULL,
  "inputTokens" INTEGER NOT NULL DEFAULT 0,
  "outputTokens" INTEGER NOT NULL DEFAULT 0,
  "latencyMs" INTEGER NOT NULL,
  "priceRuleId" UUID,
  "occurredAt" TIMESTAMP(3) NOT NULL,
  "recordedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  CONSTRAINT "UsageEvent_pkey" PRIMARY KEY ("id", "occurredAt")
) PARTITION BY RANGE ("occurredAt")\073

CREATE INDEX "UsageEvent_orgId_occurredAt_idx" ON "UsageEvent" ("orgId", "occurredAt") INCLUDE ("costMicros")\073
CREATE INDEX "UsageEvent_occurredAt_idx" ON "UsageEvent" USING brin ("occurredAt")\073

CREATE TABLE "UsageEvent_default" PARTITION OF "UsageEvent" DEFAULT\073
FOR m IN
    SELECT DISTINCT date_trunc(''month'', "occurredAt")::date FROM "UsageEvent_unpartitioned"
    UNION
    SELECT generate_series(date_trunc(''month'', now() AT TIME ZONE ''UTC''), date_trunc(''month'', now() AT TIME ZONE ''UTC'') + interval ''2 months'', interval ''1 month'')::date
  LOOP
    PERFORM tollgate_ensure_usage_partition(m)\073
  END LOOP\073
INSERT INTO "UsageEvent" SELECT * FROM "UsageEvent_unpartitioned"\073
DROP TABLE "UsageEvent_unpartitioned"\073
CREATE TRIGGER "UsageEvent_report_rollups"
  AFTER INSERT ON "UsageEvent" REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION tollgate_usage_rollups_on_insert()\073

DELETE FROM "UsageDailyRollup" WHERE "day" >= (now() AT TIME ZONE ''UTC'')::date - 1\073
INSERT INTO "UsageDailyRollup" ("orgId", "day", "teamId", "userId", "keyId", "upstreamId", "toolName", "calls", "errors", "costMicros", "outputTokens", "latencyMsSum")
SELECT e."orgId", e."occurredAt"::date, (array_agg(e."teamId"))[1], (array_agg(e."userId"))[1], e."keyId", e."upstreamId", e."toolName",
       count(*)::int, (count(*) FILTER (WHERE e."outcome" <> ''OK''))::int,
       COALESCE(sum(e."costMicros"), 0), COALESCE(sum(e."outputTokens"), 0), COALESCE(sum(e."latencyMs"), 0)
FROM "UsageEvent" e
WHERE e."occurredAt" >= ((now() AT TIME ZONE ''UTC'')::date - 1)::timestamp
GROUP BY e."orgId", e."occurredAt"::date, e."keyId", e."upstreamId", e."toolName"\073
END ';

-- A zone change rebuilds an org's three report rollups from the ledger still held (retention took
-- the rest into "UsageLedgerClosing", which stays as it is).
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

-- Budget sums over the key rollup: one team's, one user's or one key's days of a period.
CREATE INDEX "UsageKeyDayRollup_orgId_teamId_day_idx" ON "UsageKeyDayRollup" ("orgId", "teamId", "day") INCLUDE ("costMicros");
CREATE INDEX "UsageKeyDayRollup_orgId_userId_day_idx" ON "UsageKeyDayRollup" ("orgId", "userId", "day") INCLUDE ("costMicros");
CREATE INDEX "UsageKeyDayRollup_orgId_keyId_day_idx" ON "UsageKeyDayRollup" ("orgId", "keyId", "day") INCLUDE ("costMicros");
