-- The ledger's insert trigger reads each key's tag set once per batch (source:
-- libs/usage/src/sql/usage-rollups.sql). Its four tool-by-tag upserts (org-wide and per team, by
-- local day and by local month) each joined the batch's per-key groups to "VirtualKey" and summed
-- them again. Now one materialized step sums the batch per org, local day, team, upstream, tool and
-- tag set, and the four upserts read those groups (the team's day rows are those groups as they
-- are). Same sums and rows, each table still written in its key's order.

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
