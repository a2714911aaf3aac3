-- The Spend explorer's tool-by-tag breakdown (`groupBy=tool,tag`, and tool or upstream reports
-- filtered by tag) read the per-key rollup ("UsageCallDayRollup", one row per key, day, upstream and
-- tool) and joined every row to its key's tags: 3.2-3.4 s at 10,000,000 ledger rows, 0.9 s at 1M.
-- "UsageToolTagDayRollup" holds the same sums per org, local day, upstream, tool and the key's tag
-- set as the key carries it now (what the report has always meant by a call's tags), so it has
-- tag sets, not keys, per tool and day. Hand-written (statement trigger, function bodies as E''
-- strings with \073 for each semicolon: the migration runner splits scripts at every one).
--
-- - The ledger's insert trigger adds each batch to it, from the groups it already sums, joined to
--   the keys' tags (one join per group of the batch, not per event).
-- - A key's tags changing (or the key deleted, its calls then have no tags, as the report's join
--   to a missing key gave) moves that key's sums, read from "UsageCallDayRollup", from the old tag
--   set to the new one, under the org's rollup lock held exclusively: a batch in flight commits
--   before the move reads the key's sums, a batch after it reads the new tags.
-- - tollgate_rebuild_usage_rollups (a zone change) rebuilds it, and retention subtracts from it
--   (LedgerPartitionsService) like from the other rollups.

CREATE TABLE "UsageToolTagDayRollup" (
  "orgId" UUID NOT NULL,
  "day" DATE NOT NULL,
  "upstreamId" UUID NOT NULL,
  "toolName" TEXT NOT NULL,
  "tags" TEXT[] NOT NULL DEFAULT ARRAY[]::TEXT[],
  "calls" BIGINT NOT NULL,
  "errors" BIGINT NOT NULL,
  "outputTokens" BIGINT NOT NULL,
  "costMicros" BIGINT NOT NULL,
  CONSTRAINT "UsageToolTagDayRollup_pkey" PRIMARY KEY ("orgId", "day", "upstreamId", "toolName", "tags")
) WITH (fillfactor = 70);

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
  -- Per tool and the key''s tag set now (a tag change moves the key''s sums: tollgate_usage_key_tags_moved).
  tool_tags AS (
    INSERT INTO "UsageToolTagDayRollup" ("orgId", "day", "upstreamId", "toolName", "tags", "calls", "errors", "outputTokens", "costMicros")
    SELECT g.org, g.day, g.up, g.tool, COALESCE(vk."tags", ''{}''), sum(g.calls), sum(g.errors), sum(g.tokens), sum(g.cost)
    FROM g LEFT JOIN "VirtualKey" vk ON vk."id" = g.key
    GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5
    ON CONFLICT ("orgId", "day", "upstreamId", "toolName", "tags") DO UPDATE SET
      "calls" = "UsageToolTagDayRollup"."calls" + EXCLUDED."calls",
      "errors" = "UsageToolTagDayRollup"."errors" + EXCLUDED."errors",
      "outputTokens" = "UsageToolTagDayRollup"."outputTokens" + EXCLUDED."outputTokens",
      "costMicros" = "UsageToolTagDayRollup"."costMicros" + EXCLUDED."costMicros"
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

CREATE OR REPLACE FUNCTION tollgate_usage_key_tags_moved() RETURNS trigger LANGUAGE plpgsql AS E'
DECLARE
  old_tags TEXT[] := COALESCE(OLD."tags", ARRAY[]::TEXT[])\073
  new_tags TEXT[] := ARRAY[]::TEXT[]\073
BEGIN
  IF TG_OP = ''UPDATE'' THEN
    new_tags := COALESCE(NEW."tags", ARRAY[]::TEXT[])\073
  END IF\073
  IF old_tags = new_tags THEN
    RETURN NULL\073
  END IF\073
  PERFORM pg_advisory_xact_lock(hashtextextended(''tollgate:usage-rollup:'' || OLD."orgId"::text, 0))\073
  -- Each statement reads the key''s sums from the per-key rollup, which the move leaves as it is.
  INSERT INTO "UsageToolTagDayRollup" ("orgId", "day", "upstreamId", "toolName", "tags", "calls", "errors", "outputTokens", "costMicros")
  SELECT r."orgId", r."day", r."upstreamId", r."toolName", new_tags, sum(r."calls"), sum(r."errors"), sum(r."outputTokens"), sum(r."costMicros")
  FROM "UsageCallDayRollup" r WHERE r."orgId" = OLD."orgId" AND r."keyId" = OLD."id"
  GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
  ON CONFLICT ("orgId", "day", "upstreamId", "toolName", "tags") DO UPDATE SET
    "calls" = "UsageToolTagDayRollup"."calls" + EXCLUDED."calls",
    "errors" = "UsageToolTagDayRollup"."errors" + EXCLUDED."errors",
    "outputTokens" = "UsageToolTagDayRollup"."outputTokens" + EXCLUDED."outputTokens",
    "costMicros" = "UsageToolTagDayRollup"."costMicros" + EXCLUDED."costMicros"\073
  UPDATE "UsageToolTagDayRollup" t SET "calls" = t."calls" - m.calls, "errors" = t."errors" - m.errors,
    "outputTokens" = t."outputTokens" - m.tokens, "costMicros" = t."costMicros" - m.cost
  FROM (
    SELECT r."orgId", r."day", r."upstreamId", r."toolName",
           sum(r."calls") AS calls, sum(r."errors") AS errors, sum(r."outputTokens") AS tokens, sum(r."costMicros") AS cost
    FROM "UsageCallDayRollup" r WHERE r."orgId" = OLD."orgId" AND r."keyId" = OLD."id" GROUP BY 1, 2, 3, 4
  ) m
  WHERE t."orgId" = m."orgId" AND t."day" = m."day" AND t."upstreamId" = m."upstreamId" AND t."toolName" = m."toolName"
    AND t."tags" = old_tags\073
  DELETE FROM "UsageToolTagDayRollup" t
  WHERE t."orgId" = OLD."orgId" AND t."tags" = old_tags AND t."calls" = 0\073
  RETURN NULL\073
END ';

CREATE TRIGGER "VirtualKey_usage_tags_moved" AFTER UPDATE OF "tags" OR DELETE ON "VirtualKey"
  FOR EACH ROW EXECUTE FUNCTION tollgate_usage_key_tags_moved();

-- A zone change rebuilds the four report rollups from the ledger still held.
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
  DELETE FROM "UsageToolTagDayRollup" WHERE "orgId" = target\073
  INSERT INTO "UsageCallDayRollup" ("orgId", "day", "keyId", "teamId", "userId", "upstreamId", "toolName", "calls", "errors", "outputTokens", "costMicros")
  SELECT e."orgId", ((e."occurredAt" AT TIME ZONE ''UTC'') AT TIME ZONE zone)::date, e."keyId", e."teamId", e."userId", e."upstreamId", e."toolName",
         count(*), count(*) FILTER (WHERE e."outcome" <> ''OK''), COALESCE(sum(e."outputTokens"), 0), COALESCE(sum(e."costMicros"), 0)
  FROM "UsageEvent" e WHERE e."orgId" = target GROUP BY 1, 2, 3, 4, 5, 6, 7\073
  -- The coarser rollups from the finest one: one pass over the ledger instead of three.
  INSERT INTO "UsageKeyDayRollup" ("orgId", "day", "keyId", "teamId", "userId", "calls", "errors", "outputTokens", "costMicros")
  SELECT r."orgId", r."day", r."keyId", r."teamId", r."userId", sum(r."calls"), sum(r."errors"), sum(r."outputTokens"), sum(r."costMicros")
  FROM "UsageCallDayRollup" r WHERE r."orgId" = target GROUP BY 1, 2, 3, 4, 5\073
  INSERT INTO "UsageToolDayRollup" ("orgId", "day", "upstreamId", "toolName", "calls", "errors", "outputTokens", "costMicros")
  SELECT r."orgId", r."day", r."upstreamId", r."toolName", sum(r."calls"), sum(r."errors"), sum(r."outputTokens"), sum(r."costMicros")
  FROM "UsageCallDayRollup" r WHERE r."orgId" = target GROUP BY 1, 2, 3, 4\073
  INSERT INTO "UsageToolTagDayRollup" ("orgId", "day", "upstreamId", "toolName", "tags", "calls", "errors", "outputTokens", "costMicros")
  SELECT r."orgId", r."day", r."upstreamId", r."toolName", COALESCE(vk."tags", ARRAY[]::TEXT[]),
         sum(r."calls"), sum(r."errors"), sum(r."outputTokens"), sum(r."costMicros")
  FROM "UsageCallDayRollup" r LEFT JOIN "VirtualKey" vk ON vk."id" = r."keyId" WHERE r."orgId" = target GROUP BY 1, 2, 3, 4, 5\073
  INSERT INTO "UsageRollupCoverage" ("orgId", "timeZone", "builtAt") VALUES (target, zone, CURRENT_TIMESTAMP)
  ON CONFLICT ("orgId") DO UPDATE SET "timeZone" = EXCLUDED."timeZone", "builtAt" = EXCLUDED."builtAt"\073
END ';

-- What the ledger already holds, from the per-key rollup and the keys' tags now.
INSERT INTO "UsageToolTagDayRollup" ("orgId", "day", "upstreamId", "toolName", "tags", "calls", "errors", "outputTokens", "costMicros")
SELECT r."orgId", r."day", r."upstreamId", r."toolName", COALESCE(vk."tags", ARRAY[]::TEXT[]),
       sum(r."calls"), sum(r."errors"), sum(r."outputTokens"), sum(r."costMicros")
FROM "UsageCallDayRollup" r LEFT JOIN "VirtualKey" vk ON vk."id" = r."keyId"
GROUP BY 1, 2, 3, 4, 5;
