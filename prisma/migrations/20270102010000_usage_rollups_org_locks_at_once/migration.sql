-- The ledger's insert trigger takes the rollup locks of a batch's orgs in one statement, and reads
-- their coverage in one (source: libs/usage/src/sql/usage-rollups.sql). It took two statements an org
-- (the lock, then the org's coverage row): a batch of a shard's stream holds events of many orgs, a
-- few each, and those statements cost more than the rest of the trigger for them. Only an org new to
-- the rollups, or whose zone changed since they were built, still takes a statement of its own, as
-- before. The rollups it writes are unchanged.

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
