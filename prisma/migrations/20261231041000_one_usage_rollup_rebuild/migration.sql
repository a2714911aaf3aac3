-- One rebuild of an org's rollups from the ledger (source: libs/usage/src/sql/usage-rollups.sql).
-- tollgate_rebuild_usage_rollups takes an optional day and now rebuilds UsageDailyRollup too (by UTC
-- day, leaving the days of months retention dropped), so an admin's repair runs it instead of the
-- worker's own INSERT ... SELECT into UsageDailyRollup, which is gone. Without a day it rebuilds
-- everything, as the upkeep after a zone change always did.
DROP FUNCTION tollgate_rebuild_usage_rollups(UUID);

CREATE OR REPLACE FUNCTION tollgate_rebuild_usage_rollups(target uuid, only_day date DEFAULT NULL::date) RETURNS void LANGUAGE plpgsql AS E'
DECLARE
  zone TEXT\073
  covered TEXT\073
  lo TIMESTAMP\073
  hi TIMESTAMP\073
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended(''tollgate:usage-rollup:'' || target::text, 0))\073
  SELECT o."timeZone" INTO zone FROM "Organization" o WHERE o."id" = target\073
  zone := COALESCE(zone, ''UTC'')\073
  SELECT c."timeZone" INTO covered FROM "UsageRollupCoverage" c WHERE c."orgId" = target\073
  IF covered IS DISTINCT FROM zone THEN
    only_day := NULL\073
  END IF\073
  -- The ledger''s rows of the local day (the trigger''s day of a row, inverted).
  lo := (only_day::timestamp AT TIME ZONE zone) AT TIME ZONE ''UTC''\073
  hi := ((only_day + 1)::timestamp AT TIME ZONE zone) AT TIME ZONE ''UTC''\073
  DELETE FROM "UsageKeyDayRollup" WHERE "orgId" = target AND (only_day IS NULL OR "day" = only_day)\073
  DELETE FROM "UsageToolDayRollup" WHERE "orgId" = target AND (only_day IS NULL OR "day" = only_day)\073
  DELETE FROM "UsageCallDayRollup" WHERE "orgId" = target AND (only_day IS NULL OR "day" = only_day)\073
  DELETE FROM "UsageToolTagDayRollup" WHERE "orgId" = target AND (only_day IS NULL OR "day" = only_day)\073
  INSERT INTO "UsageCallDayRollup" ("orgId", "day", "keyId", "teamId", "userId", "upstreamId", "toolName", "calls", "errors", "outputTokens", "costMicros")
  SELECT e."orgId", ((e."occurredAt" AT TIME ZONE ''UTC'') AT TIME ZONE zone)::date, e."keyId", e."teamId", e."userId", e."upstreamId", e."toolName",
         count(*), count(*) FILTER (WHERE e."outcome" <> ''OK''), COALESCE(sum(e."outputTokens"), 0), COALESCE(sum(e."costMicros"), 0)
  FROM "UsageEvent" e WHERE e."orgId" = target AND (only_day IS NULL OR (e."occurredAt" >= lo AND e."occurredAt" < hi))
  GROUP BY 1, 2, 3, 4, 5, 6, 7\073
  -- The coarser rollups from the finest one: one pass over the ledger instead of three.
  INSERT INTO "UsageKeyDayRollup" ("orgId", "day", "keyId", "teamId", "userId", "calls", "errors", "outputTokens", "costMicros")
  SELECT r."orgId", r."day", r."keyId", r."teamId", r."userId", sum(r."calls"), sum(r."errors"), sum(r."outputTokens"), sum(r."costMicros")
  FROM "UsageCallDayRollup" r WHERE r."orgId" = target AND (only_day IS NULL OR r."day" = only_day) GROUP BY 1, 2, 3, 4, 5\073
  INSERT INTO "UsageToolDayRollup" ("orgId", "day", "upstreamId", "toolName", "calls", "errors", "outputTokens", "costMicros")
  SELECT r."orgId", r."day", r."upstreamId", r."toolName", sum(r."calls"), sum(r."errors"), sum(r."outputTokens"), sum(r."costMicros")
  FROM "UsageCallDayRollup" r WHERE r."orgId" = target AND (only_day IS NULL OR r."day" = only_day) GROUP BY 1, 2, 3, 4\073
  INSERT INTO "UsageToolTagDayRollup" ("orgId", "day", "upstreamId", "toolName", "tags", "calls", "errors", "outputTokens", "costMicros")
  SELECT r."orgId", r."day", r."upstreamId", r."toolName", COALESCE(vk."tags", ARRAY[]::TEXT[]),
         sum(r."calls"), sum(r."errors"), sum(r."outputTokens"), sum(r."costMicros")
  FROM "UsageCallDayRollup" r LEFT JOIN "VirtualKey" vk ON vk."id" = r."keyId"
  WHERE r."orgId" = target AND (only_day IS NULL OR r."day" = only_day) GROUP BY 1, 2, 3, 4, 5\073
  -- UTC days, as the trigger adds them (a key belongs to one team and one user).
  DELETE FROM "UsageDailyRollup" d WHERE d."orgId" = target AND (only_day IS NULL OR d."day" = only_day)
    AND NOT EXISTS (SELECT 1 FROM "UsageLedgerRetention" m WHERE m."month" = date_trunc(''month'', d."day"::timestamp)::date)\073
  INSERT INTO "UsageDailyRollup" ("orgId", "day", "teamId", "userId", "keyId", "upstreamId", "toolName", "calls", "errors", "costMicros", "outputTokens", "latencyMsSum")
  SELECT e."orgId", e."occurredAt"::date, (array_agg(e."teamId"))[1], (array_agg(e."userId"))[1], e."keyId", e."upstreamId", e."toolName",
         count(*)::int, (count(*) FILTER (WHERE e."outcome" <> ''OK''))::int,
         COALESCE(sum(e."costMicros"), 0), COALESCE(sum(e."outputTokens"), 0), COALESCE(sum(e."latencyMs"), 0)
  FROM "UsageEvent" e
  WHERE e."orgId" = target AND (only_day IS NULL OR (e."occurredAt" >= only_day::timestamp AND e."occurredAt" < (only_day + 1)::timestamp))
    AND NOT EXISTS (SELECT 1 FROM "UsageLedgerRetention" m WHERE m."month" = date_trunc(''month'', e."occurredAt")::date)
  GROUP BY 1, 2, 5, 6, 7\073
  IF only_day IS NULL THEN
    INSERT INTO "UsageRollupCoverage" ("orgId", "timeZone", "builtAt") VALUES (target, zone, CURRENT_TIMESTAMP)
    ON CONFLICT ("orgId") DO UPDATE SET "timeZone" = EXCLUDED."timeZone", "builtAt" = EXCLUDED."builtAt"\073
  END IF\073
END ';
