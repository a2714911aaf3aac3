-- Per-user month and dekad rows for the per-key-and-tool rollup (source: libs/usage/src/sql/usage-rollups.sql).
-- Users by tool over the last 30 days at 10,000,000 ledger rows read ~400k rows of the per-key month,
-- dekad and day rows on the 11th-13th of a month (p95 over 500 ms). A user's keys overlap in their
-- tools over a month or a dekad, so the same sums per org, period, user, team, upstream and tool are
-- ~3x fewer rows: "UsageUserCallMonthRollup" and "UsageUserCallDekadRollup". Reports without keys or
-- tags (users or teams by tool, a user's tools) read their months and dekads from them and their days
-- from "UsageCallDayRollup".
--
-- - The ledger's insert trigger adds each batch to both, from the groups it already sums.
-- - tollgate_rebuild_usage_rollups rebuilds the months and dekads it rebuilds from the per-key month
--   and dekad rows it has just rebuilt, and retention subtracts from both (LedgerPartitionsService).
-- - No index but the key: it leads with the org, the period and the user.
-- - Filled last from the per-key month and dekad rows with the ledger's writers waiting (the runner
--   commits each statement): a batch committed before the trigger changed is in those rows, one after
--   it wrote per-user rows the fill replaces, so each call is counted once.

CREATE TABLE "UsageUserCallMonthRollup" (
  "orgId" UUID NOT NULL,
  "month" DATE NOT NULL,
  "userId" UUID NOT NULL,
  "teamId" UUID NOT NULL,
  "upstreamId" UUID NOT NULL,
  "toolName" TEXT NOT NULL,
  "calls" BIGINT NOT NULL,
  "errors" BIGINT NOT NULL,
  "outputTokens" BIGINT NOT NULL,
  "costMicros" BIGINT NOT NULL,
  CONSTRAINT "UsageUserCallMonthRollup_pkey" PRIMARY KEY ("orgId", "month", "userId", "teamId", "upstreamId", "toolName")
) WITH (fillfactor = 70);

CREATE TABLE "UsageUserCallDekadRollup" (
  "orgId" UUID NOT NULL,
  "dekad" DATE NOT NULL,
  "userId" UUID NOT NULL,
  "teamId" UUID NOT NULL,
  "upstreamId" UUID NOT NULL,
  "toolName" TEXT NOT NULL,
  "calls" BIGINT NOT NULL,
  "errors" BIGINT NOT NULL,
  "outputTokens" BIGINT NOT NULL,
  "costMicros" BIGINT NOT NULL,
  CONSTRAINT "UsageUserCallDekadRollup_pkey" PRIMARY KEY ("orgId", "dekad", "userId", "teamId", "upstreamId", "toolName")
) WITH (fillfactor = 70);

CREATE OR REPLACE FUNCTION tollgate_usage_rollups_on_insert() RETURNS trigger LANGUAGE plpgsql AS E'
DECLARE
  r RECORD\073
BEGIN
  -- A rebuild holds an org''s lock exclusively: the batch lands either before its snapshot or after it.
  -- Every org of the batch in one statement, in one order (a batch of a shard''s stream holds many orgs\073
  -- a statement or two each cost more than the rest of the trigger for a few events of an org).
  PERFORM pg_advisory_xact_lock_shared(hashtextextended(''tollgate:usage-rollup:'' || s.org::text, 0))
  FROM (SELECT DISTINCT n."orgId" AS org FROM new_rows n ORDER BY 1) s\073
  -- Only an org new to the rollups, or whose zone changed since they were built, needs more.
  FOR r IN
    SELECT s.org AS org_id, s.zone, c."orgId" IS NULL AS uncovered
    FROM (
      SELECT n."orgId" AS org, COALESCE(min(o."timeZone"), ''UTC'') AS zone
      FROM new_rows n LEFT JOIN "Organization" o ON o."id" = n."orgId" GROUP BY 1
    ) s LEFT JOIN "UsageRollupCoverage" c ON c."orgId" = s.org
    WHERE c."orgId" IS NULL OR c."timeZone" <> s.zone
    ORDER BY 1
  LOOP
    IF r.uncovered THEN
      INSERT INTO "UsageRollupCoverage" ("orgId", "timeZone") VALUES (r.org_id, r.zone) ON CONFLICT ("orgId") DO NOTHING\073
    ELSE
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
  -- The same per local month: users (or keys) by tool over a range read its whole months from here.
  call_months AS (
    INSERT INTO "UsageCallMonthRollup" ("orgId", "month", "keyId", "teamId", "userId", "upstreamId", "toolName", "calls", "errors", "outputTokens", "costMicros")
    SELECT org, date_trunc(''month'', day)::date, key, team, usr, up, tool, sum(calls), sum(errors), sum(tokens), sum(cost)
    FROM g GROUP BY 1, 2, 3, 4, 5, 6, 7 ORDER BY 1, 2, 3, 4, 5, 6, 7
    ON CONFLICT ("orgId", "month", "keyId", "teamId", "userId", "upstreamId", "toolName") DO UPDATE SET
      "calls" = "UsageCallMonthRollup"."calls" + EXCLUDED."calls",
      "errors" = "UsageCallMonthRollup"."errors" + EXCLUDED."errors",
      "outputTokens" = "UsageCallMonthRollup"."outputTokens" + EXCLUDED."outputTokens",
      "costMicros" = "UsageCallMonthRollup"."costMicros" + EXCLUDED."costMicros"
  ),
  -- The same per local dekad (its first day: the 1st, 11th or 21st): a range''s edge months read their
  -- whole dekads from here, so an edge costs a few days of day rows on any date, not up to 19.
  call_dekads AS (
    INSERT INTO "UsageCallDekadRollup" ("orgId", "dekad", "keyId", "teamId", "userId", "upstreamId", "toolName", "calls", "errors", "outputTokens", "costMicros")
    SELECT org, date_trunc(''month'', day)::date + LEAST((extract(day FROM day)::int - 1) / 10, 2) * 10, key, team, usr, up, tool,
           sum(calls), sum(errors), sum(tokens), sum(cost)
    FROM g GROUP BY 1, 2, 3, 4, 5, 6, 7 ORDER BY 1, 2, 3, 4, 5, 6, 7
    ON CONFLICT ("orgId", "dekad", "keyId", "teamId", "userId", "upstreamId", "toolName") DO UPDATE SET
      "calls" = "UsageCallDekadRollup"."calls" + EXCLUDED."calls",
      "errors" = "UsageCallDekadRollup"."errors" + EXCLUDED."errors",
      "outputTokens" = "UsageCallDekadRollup"."outputTokens" + EXCLUDED."outputTokens",
      "costMicros" = "UsageCallDekadRollup"."costMicros" + EXCLUDED."costMicros"
  ),
  -- The same per user (a user''s keys summed: team, user, upstream, tool), by local month and dekad:
  -- users (or teams) by tool read these, a user''s keys overlapping in their tools (~3x fewer rows).
  user_call_months AS (
    INSERT INTO "UsageUserCallMonthRollup" ("orgId", "month", "userId", "teamId", "upstreamId", "toolName", "calls", "errors", "outputTokens", "costMicros")
    SELECT org, date_trunc(''month'', day)::date, usr, team, up, tool, sum(calls), sum(errors), sum(tokens), sum(cost)
    FROM g GROUP BY 1, 2, 3, 4, 5, 6 ORDER BY 1, 2, 3, 4, 5, 6
    ON CONFLICT ("orgId", "month", "userId", "teamId", "upstreamId", "toolName") DO UPDATE SET
      "calls" = "UsageUserCallMonthRollup"."calls" + EXCLUDED."calls",
      "errors" = "UsageUserCallMonthRollup"."errors" + EXCLUDED."errors",
      "outputTokens" = "UsageUserCallMonthRollup"."outputTokens" + EXCLUDED."outputTokens",
      "costMicros" = "UsageUserCallMonthRollup"."costMicros" + EXCLUDED."costMicros"
  ),
  user_call_dekads AS (
    INSERT INTO "UsageUserCallDekadRollup" ("orgId", "dekad", "userId", "teamId", "upstreamId", "toolName", "calls", "errors", "outputTokens", "costMicros")
    SELECT org, date_trunc(''month'', day)::date + LEAST((extract(day FROM day)::int - 1) / 10, 2) * 10, usr, team, up, tool,
           sum(calls), sum(errors), sum(tokens), sum(cost)
    FROM g GROUP BY 1, 2, 3, 4, 5, 6 ORDER BY 1, 2, 3, 4, 5, 6
    ON CONFLICT ("orgId", "dekad", "userId", "teamId", "upstreamId", "toolName") DO UPDATE SET
      "calls" = "UsageUserCallDekadRollup"."calls" + EXCLUDED."calls",
      "errors" = "UsageUserCallDekadRollup"."errors" + EXCLUDED."errors",
      "outputTokens" = "UsageUserCallDekadRollup"."outputTokens" + EXCLUDED."outputTokens",
      "costMicros" = "UsageUserCallDekadRollup"."costMicros" + EXCLUDED."costMicros"
  ),
  -- Per team, tool and the key''s tag set now (a tag change moves the key''s sums:
  -- tollgate_usage_key_tags_moved), each key''s tags read once: the four tool-by-tag rollups below
  -- sum these groups, not the batch''s per-key ones.
  t AS MATERIALIZED (
    SELECT g.org, g.day, g.team, g.up, g.tool, COALESCE(vk."tags", ''{}'') AS tags,
           sum(g.calls) AS calls, sum(g.errors) AS errors, sum(g.tokens) AS tokens, sum(g.cost) AS cost
    FROM g LEFT JOIN "VirtualKey" vk ON vk."id" = g.key
    GROUP BY 1, 2, 3, 4, 5, 6
  ),
  tool_tags AS (
    INSERT INTO "UsageToolTagDayRollup" ("orgId", "day", "upstreamId", "toolName", "tags", "calls", "errors", "outputTokens", "costMicros")
    SELECT org, day, up, tool, tags, sum(calls), sum(errors), sum(tokens), sum(cost)
    FROM t GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5
    ON CONFLICT ("orgId", "day", "upstreamId", "toolName", "tags") DO UPDATE SET
      "calls" = "UsageToolTagDayRollup"."calls" + EXCLUDED."calls",
      "errors" = "UsageToolTagDayRollup"."errors" + EXCLUDED."errors",
      "outputTokens" = "UsageToolTagDayRollup"."outputTokens" + EXCLUDED."outputTokens",
      "costMicros" = "UsageToolTagDayRollup"."costMicros" + EXCLUDED."costMicros"
  ),
  -- The same per local month: a long range reads its whole months from here instead of ~30 day rows each.
  tool_tag_months AS (
    INSERT INTO "UsageToolTagMonthRollup" ("orgId", "month", "upstreamId", "toolName", "tags", "calls", "errors", "outputTokens", "costMicros")
    SELECT org, date_trunc(''month'', day)::date, up, tool, tags, sum(calls), sum(errors), sum(tokens), sum(cost)
    FROM t GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5
    ON CONFLICT ("orgId", "month", "upstreamId", "toolName", "tags") DO UPDATE SET
      "calls" = "UsageToolTagMonthRollup"."calls" + EXCLUDED."calls",
      "errors" = "UsageToolTagMonthRollup"."errors" + EXCLUDED."errors",
      "outputTokens" = "UsageToolTagMonthRollup"."outputTokens" + EXCLUDED."outputTokens",
      "costMicros" = "UsageToolTagMonthRollup"."costMicros" + EXCLUDED."costMicros"
  ),
  -- The same per team, by day and by month: a team''s reports across tools and tags read its own
  -- groups, however many keys and users the team has.
  team_tool_tags AS (
    INSERT INTO "UsageTeamToolTagDayRollup" ("orgId", "day", "teamId", "upstreamId", "toolName", "tags", "calls", "errors", "outputTokens", "costMicros")
    SELECT org, day, team, up, tool, tags, calls, errors, tokens, cost
    FROM t ORDER BY 1, 2, 3, 4, 5, 6
    ON CONFLICT ("orgId", "day", "teamId", "upstreamId", "toolName", "tags") DO UPDATE SET
      "calls" = "UsageTeamToolTagDayRollup"."calls" + EXCLUDED."calls",
      "errors" = "UsageTeamToolTagDayRollup"."errors" + EXCLUDED."errors",
      "outputTokens" = "UsageTeamToolTagDayRollup"."outputTokens" + EXCLUDED."outputTokens",
      "costMicros" = "UsageTeamToolTagDayRollup"."costMicros" + EXCLUDED."costMicros"
  ),
  team_tool_tag_months AS (
    INSERT INTO "UsageTeamToolTagMonthRollup" ("orgId", "month", "teamId", "upstreamId", "toolName", "tags", "calls", "errors", "outputTokens", "costMicros")
    SELECT org, date_trunc(''month'', day)::date, team, up, tool, tags, sum(calls), sum(errors), sum(tokens), sum(cost)
    FROM t GROUP BY 1, 2, 3, 4, 5, 6 ORDER BY 1, 2, 3, 4, 5, 6
    ON CONFLICT ("orgId", "month", "teamId", "upstreamId", "toolName", "tags") DO UPDATE SET
      "calls" = "UsageTeamToolTagMonthRollup"."calls" + EXCLUDED."calls",
      "errors" = "UsageTeamToolTagMonthRollup"."errors" + EXCLUDED."errors",
      "outputTokens" = "UsageTeamToolTagMonthRollup"."outputTokens" + EXCLUDED."outputTokens",
      "costMicros" = "UsageTeamToolTagMonthRollup"."costMicros" + EXCLUDED."costMicros"
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

CREATE OR REPLACE FUNCTION tollgate_rebuild_usage_rollups(target uuid, only_day date DEFAULT NULL::date) RETURNS void LANGUAGE plpgsql AS E'
DECLARE
  zone TEXT\073
  covered TEXT\073
  lo TIMESTAMP\073
  hi TIMESTAMP\073
  only_dekad DATE\073
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
  DELETE FROM "UsageTeamToolTagDayRollup" WHERE "orgId" = target AND (only_day IS NULL OR "day" = only_day)\073
  INSERT INTO "UsageCallDayRollup" ("orgId", "day", "keyId", "teamId", "userId", "upstreamId", "toolName", "calls", "errors", "outputTokens", "costMicros")
  SELECT e."orgId", ((e."occurredAt" AT TIME ZONE ''UTC'') AT TIME ZONE zone)::date, e."keyId", e."teamId", e."userId", e."upstreamId", e."toolName",
         count(*), count(*) FILTER (WHERE e."outcome" <> ''OK''), COALESCE(sum(e."outputTokens"), 0), COALESCE(sum(e."costMicros"), 0)
  FROM "UsageEvent" e WHERE e."orgId" = target AND (only_day IS NULL OR (e."occurredAt" >= lo AND e."occurredAt" < hi))
  GROUP BY 1, 2, 3, 4, 5, 6, 7 ORDER BY 1, 2, 3, 4, 5, 6, 7\073
  -- The coarser rollups from the finest one: one pass over the ledger instead of three. Every rollup
  -- is written in its key''s order, as the trigger''s day-by-day writes leave it: a range of days, or
  -- a key''s or a team''s rows of a day, on adjacent pages rather than one page a row.
  INSERT INTO "UsageKeyDayRollup" ("orgId", "day", "keyId", "teamId", "userId", "calls", "errors", "outputTokens", "costMicros")
  SELECT r."orgId", r."day", r."keyId", r."teamId", r."userId", sum(r."calls"), sum(r."errors"), sum(r."outputTokens"), sum(r."costMicros")
  FROM "UsageCallDayRollup" r WHERE r."orgId" = target AND (only_day IS NULL OR r."day" = only_day) GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5\073
  INSERT INTO "UsageToolDayRollup" ("orgId", "day", "upstreamId", "toolName", "calls", "errors", "outputTokens", "costMicros")
  SELECT r."orgId", r."day", r."upstreamId", r."toolName", sum(r."calls"), sum(r."errors"), sum(r."outputTokens"), sum(r."costMicros")
  FROM "UsageCallDayRollup" r WHERE r."orgId" = target AND (only_day IS NULL OR r."day" = only_day) GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4\073
  INSERT INTO "UsageToolTagDayRollup" ("orgId", "day", "upstreamId", "toolName", "tags", "calls", "errors", "outputTokens", "costMicros")
  SELECT r."orgId", r."day", r."upstreamId", r."toolName", COALESCE(vk."tags", ARRAY[]::TEXT[]),
         sum(r."calls"), sum(r."errors"), sum(r."outputTokens"), sum(r."costMicros")
  FROM "UsageCallDayRollup" r LEFT JOIN "VirtualKey" vk ON vk."id" = r."keyId"
  WHERE r."orgId" = target AND (only_day IS NULL OR r."day" = only_day) GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5\073
  INSERT INTO "UsageTeamToolTagDayRollup" ("orgId", "day", "teamId", "upstreamId", "toolName", "tags", "calls", "errors", "outputTokens", "costMicros")
  SELECT r."orgId", r."day", r."teamId", r."upstreamId", r."toolName", COALESCE(vk."tags", ARRAY[]::TEXT[]),
         sum(r."calls"), sum(r."errors"), sum(r."outputTokens"), sum(r."costMicros")
  FROM "UsageCallDayRollup" r LEFT JOIN "VirtualKey" vk ON vk."id" = r."keyId"
  WHERE r."orgId" = target AND (only_day IS NULL OR r."day" = only_day) GROUP BY 1, 2, 3, 4, 5, 6 ORDER BY 1, 2, 3, 4, 5, 6\073
  -- The month rows of the months rebuilt, from their day rows (a day''s repair: that whole month).
  DELETE FROM "UsageCallMonthRollup" WHERE "orgId" = target AND (only_day IS NULL OR "month" = date_trunc(''month'', only_day)::date)\073
  INSERT INTO "UsageCallMonthRollup" ("orgId", "month", "keyId", "teamId", "userId", "upstreamId", "toolName", "calls", "errors", "outputTokens", "costMicros")
  SELECT r."orgId", date_trunc(''month'', r."day")::date, r."keyId", r."teamId", r."userId", r."upstreamId", r."toolName",
         sum(r."calls"), sum(r."errors"), sum(r."outputTokens"), sum(r."costMicros")
  FROM "UsageCallDayRollup" r
  WHERE r."orgId" = target
    AND (only_day IS NULL OR (r."day" >= date_trunc(''month'', only_day)::date AND r."day" < (date_trunc(''month'', only_day) + interval ''1 month'')::date))
  GROUP BY 1, 2, 3, 4, 5, 6, 7 ORDER BY 1, 2, 3, 4, 5, 6, 7\073
  -- The dekad rows likewise (a day''s repair: its whole dekad, the days 1-10, 11-20 or 21 to the end).
  only_dekad := date_trunc(''month'', only_day)::date + LEAST((extract(day FROM only_day)::int - 1) / 10, 2) * 10\073
  DELETE FROM "UsageCallDekadRollup" WHERE "orgId" = target AND (only_day IS NULL OR "dekad" = only_dekad)\073
  INSERT INTO "UsageCallDekadRollup" ("orgId", "dekad", "keyId", "teamId", "userId", "upstreamId", "toolName", "calls", "errors", "outputTokens", "costMicros")
  SELECT r."orgId", date_trunc(''month'', r."day")::date + LEAST((extract(day FROM r."day")::int - 1) / 10, 2) * 10,
         r."keyId", r."teamId", r."userId", r."upstreamId", r."toolName", sum(r."calls"), sum(r."errors"), sum(r."outputTokens"), sum(r."costMicros")
  FROM "UsageCallDayRollup" r
  WHERE r."orgId" = target
    AND (only_day IS NULL OR (r."day" >= only_dekad AND r."day" < CASE WHEN extract(day FROM only_dekad) = 21
                                   THEN (date_trunc(''month'', only_dekad) + interval ''1 month'')::date ELSE only_dekad + 10 END))
  GROUP BY 1, 2, 3, 4, 5, 6, 7 ORDER BY 1, 2, 3, 4, 5, 6, 7\073
  -- The per-user month and dekad rows of those months and dekads, from the per-key rows just rebuilt.
  DELETE FROM "UsageUserCallMonthRollup" WHERE "orgId" = target AND (only_day IS NULL OR "month" = date_trunc(''month'', only_day)::date)\073
  INSERT INTO "UsageUserCallMonthRollup" ("orgId", "month", "userId", "teamId", "upstreamId", "toolName", "calls", "errors", "outputTokens", "costMicros")
  SELECT r."orgId", r."month", r."userId", r."teamId", r."upstreamId", r."toolName", sum(r."calls"), sum(r."errors"), sum(r."outputTokens"), sum(r."costMicros")
  FROM "UsageCallMonthRollup" r WHERE r."orgId" = target AND (only_day IS NULL OR r."month" = date_trunc(''month'', only_day)::date)
  GROUP BY 1, 2, 3, 4, 5, 6 ORDER BY 1, 2, 3, 4, 5, 6\073
  DELETE FROM "UsageUserCallDekadRollup" WHERE "orgId" = target AND (only_day IS NULL OR "dekad" = only_dekad)\073
  INSERT INTO "UsageUserCallDekadRollup" ("orgId", "dekad", "userId", "teamId", "upstreamId", "toolName", "calls", "errors", "outputTokens", "costMicros")
  SELECT r."orgId", r."dekad", r."userId", r."teamId", r."upstreamId", r."toolName", sum(r."calls"), sum(r."errors"), sum(r."outputTokens"), sum(r."costMicros")
  FROM "UsageCallDekadRollup" r WHERE r."orgId" = target AND (only_day IS NULL OR r."dekad" = only_dekad)
  GROUP BY 1, 2, 3, 4, 5, 6 ORDER BY 1, 2, 3, 4, 5, 6\073
  DELETE FROM "UsageToolTagMonthRollup" WHERE "orgId" = target AND (only_day IS NULL OR "month" = date_trunc(''month'', only_day)::date)\073
  INSERT INTO "UsageToolTagMonthRollup" ("orgId", "month", "upstreamId", "toolName", "tags", "calls", "errors", "outputTokens", "costMicros")
  SELECT r."orgId", date_trunc(''month'', r."day")::date, r."upstreamId", r."toolName", r."tags", sum(r."calls"), sum(r."errors"), sum(r."outputTokens"), sum(r."costMicros")
  FROM "UsageToolTagDayRollup" r
  WHERE r."orgId" = target AND (only_day IS NULL OR date_trunc(''month'', r."day") = date_trunc(''month'', only_day))
  GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5\073
  DELETE FROM "UsageTeamToolTagMonthRollup" WHERE "orgId" = target AND (only_day IS NULL OR "month" = date_trunc(''month'', only_day)::date)\073
  INSERT INTO "UsageTeamToolTagMonthRollup" ("orgId", "month", "teamId", "upstreamId", "toolName", "tags", "calls", "errors", "outputTokens", "costMicros")
  SELECT r."orgId", date_trunc(''month'', r."day")::date, r."teamId", r."upstreamId", r."toolName", r."tags", sum(r."calls"), sum(r."errors"), sum(r."outputTokens"), sum(r."costMicros")
  FROM "UsageTeamToolTagDayRollup" r
  WHERE r."orgId" = target AND (only_day IS NULL OR date_trunc(''month'', r."day") = date_trunc(''month'', only_day))
  GROUP BY 1, 2, 3, 4, 5, 6 ORDER BY 1, 2, 3, 4, 5, 6\073
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
  GROUP BY 1, 2, 5, 6, 7 ORDER BY 1, 2, 5, 6, 7\073
  IF only_day IS NULL THEN
    INSERT INTO "UsageRollupCoverage" ("orgId", "timeZone", "builtAt") VALUES (target, zone, CURRENT_TIMESTAMP)
    ON CONFLICT ("orgId") DO UPDATE SET "timeZone" = EXCLUDED."timeZone", "builtAt" = EXCLUDED."builtAt"\073
  END IF\073
END ';

-- What the per-key month and dekad rows hold, with the ledger's writers and the rollups' rebuilds and
-- retention waiting.
DO E'
BEGIN
LOCK TABLE "UsageEvent", "UsageCallMonthRollup", "UsageCallDekadRollup" IN SHARE MODE\073
TRUNCATE "UsageUserCallMonthRollup", "UsageUserCallDekadRollup"\073
INSERT INTO "UsageUserCallMonthRollup" ("orgId", "month", "userId", "teamId", "upstreamId", "toolName", "calls", "errors", "outputTokens", "costMicros")
SELECT r."orgId", r."month", r."userId", r."teamId", r."upstreamId", r."toolName", sum(r."calls"), sum(r."errors"), sum(r."outputTokens"), sum(r."costMicros")
FROM "UsageCallMonthRollup" r
GROUP BY 1, 2, 3, 4, 5, 6 ORDER BY 1, 2, 3, 4, 5, 6\073
INSERT INTO "UsageUserCallDekadRollup" ("orgId", "dekad", "userId", "teamId", "upstreamId", "toolName", "calls", "errors", "outputTokens", "costMicros")
SELECT r."orgId", r."dekad", r."userId", r."teamId", r."upstreamId", r."toolName", sum(r."calls"), sum(r."errors"), sum(r."outputTokens"), sum(r."costMicros")
FROM "UsageCallDekadRollup" r
GROUP BY 1, 2, 3, 4, 5, 6 ORDER BY 1, 2, 3, 4, 5, 6\073
END ';
