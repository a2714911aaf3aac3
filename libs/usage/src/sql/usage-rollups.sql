-- The usage rollups, kept by the ledger's insert triggers: what they are now.
--
-- This file is the source; migrations apply it. To change a rollup: edit it here, then add a
-- migration that runs the changed CREATE OR REPLACE (a migration's function body is an E'' string
-- with each ' doubled and each ; written \073: the migration runner splits scripts at every one).
-- `test/usage/usage-sql.test.ts` fails until the migrated database's functions and triggers are
-- these, so neither can drift from the other.
--
-- tollgate_usage_rollups_on_insert (statement trigger "UsageEvent_report_rollups", the batch's rows
-- as new_rows): adds each batch of ledger rows to the report rollups by the organisation's local day
-- (per key, per tool, per call, per tool and tag set: UsageKeyDayRollup, UsageToolDayRollup,
-- UsageCallDayRollup, UsageToolTagDayRollup, and per local month UsageCallMonthRollup and
-- UsageToolTagMonthRollup, which long ranges read for their whole months, and per local dekad (days
-- 1-10, 11-20, 21 to the end) UsageCallDekadRollup, which a range's edge months read for their whole
-- dekads, and both again per user (a user's keys summed), UsageUserCallMonthRollup and
-- UsageUserCallDekadRollup, for reports without keys or tags; the tool-by-tag day and month
-- rollups again per team, UsageTeamToolTagDayRollup and UsageTeamToolTagMonthRollup, for a team's reports), the UTC day rollup (UsageDailyRollup) and the running
-- totals per scope (UsageScopeTotal). The first loop marks an organisation whose zone changed since its rollups were built (UsageRollupCoverage),
-- so reports read the ledger until the worker's upkeep rebuilds them (tollgate_rebuild_usage_rollups,
-- which also repairs an org's rollups, or one day of them, on an admin's request).
-- tollgate_usage_key_tags_moved ("VirtualKey_usage_tags_moved"): a key's tags changed (or the key
-- was deleted) moves its sums in the tool-by-tag rollups (org-wide and per team, by day and by month)
-- from the old tag set to the new one.
-- tollgate_refused_rollup_on_insert ("RefusedCall_rollup"): refused calls counted in 15-minute
-- buckets (RefusedCallRollup).

CREATE OR REPLACE FUNCTION tollgate_usage_rollups_on_insert() RETURNS trigger LANGUAGE plpgsql AS $body$
DECLARE
  r RECORD;
BEGIN
  -- A rebuild holds an org's lock exclusively: the batch lands either before its snapshot or after it.
  -- Every org of the batch in one statement, in one order (a batch of a shard's stream holds many orgs;
  -- a statement or two each cost more than the rest of the trigger for a few events of an org).
  PERFORM pg_advisory_xact_lock_shared(hashtextextended('tollgate:usage-rollup:' || s.org::text, 0))
  FROM (SELECT DISTINCT n."orgId" AS org FROM new_rows n ORDER BY 1) s;
  -- Only an org new to the rollups, or whose zone changed since they were built, needs more.
  FOR r IN
    SELECT s.org AS org_id, s.zone, c."orgId" IS NULL AS uncovered
    FROM (
      SELECT n."orgId" AS org, COALESCE(min(o."timeZone"), 'UTC') AS zone
      FROM new_rows n LEFT JOIN "Organization" o ON o."id" = n."orgId" GROUP BY 1
    ) s LEFT JOIN "UsageRollupCoverage" c ON c."orgId" = s.org
    WHERE c."orgId" IS NULL OR c."timeZone" <> s.zone
    ORDER BY 1
  LOOP
    IF r.uncovered THEN
      INSERT INTO "UsageRollupCoverage" ("orgId", "timeZone") VALUES (r.org_id, r.zone) ON CONFLICT ("orgId") DO NOTHING;
    ELSE
      UPDATE "UsageRollupCoverage" SET "timeZone" = NULL WHERE "orgId" = r.org_id AND "timeZone" IS NOT NULL;
    END IF;
  END LOOP;

  WITH g AS MATERIALIZED (
    SELECT n."orgId" AS org, ((n."occurredAt" AT TIME ZONE 'UTC') AT TIME ZONE COALESCE(o."timeZone", 'UTC'))::date AS day,
           n."occurredAt"::date AS utc_day, n."keyId" AS key, n."teamId" AS team, n."userId" AS usr, n."upstreamId" AS up, n."toolName" AS tool,
           count(*) AS calls, count(*) FILTER (WHERE n."outcome" <> 'OK') AS errors,
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
    SELECT org, date_trunc('month', day)::date, key, team, usr, up, tool, sum(calls), sum(errors), sum(tokens), sum(cost)
    FROM g GROUP BY 1, 2, 3, 4, 5, 6, 7 ORDER BY 1, 2, 3, 4, 5, 6, 7
    ON CONFLICT ("orgId", "month", "keyId", "teamId", "userId", "upstreamId", "toolName") DO UPDATE SET
      "calls" = "UsageCallMonthRollup"."calls" + EXCLUDED."calls",
      "errors" = "UsageCallMonthRollup"."errors" + EXCLUDED."errors",
      "outputTokens" = "UsageCallMonthRollup"."outputTokens" + EXCLUDED."outputTokens",
      "costMicros" = "UsageCallMonthRollup"."costMicros" + EXCLUDED."costMicros"
  ),
  -- The same per local dekad (its first day: the 1st, 11th or 21st): a range's edge months read their
  -- whole dekads from here, so an edge costs a few days of day rows on any date, not up to 19.
  call_dekads AS (
    INSERT INTO "UsageCallDekadRollup" ("orgId", "dekad", "keyId", "teamId", "userId", "upstreamId", "toolName", "calls", "errors", "outputTokens", "costMicros")
    SELECT org, date_trunc('month', day)::date + LEAST((extract(day FROM day)::int - 1) / 10, 2) * 10, key, team, usr, up, tool,
           sum(calls), sum(errors), sum(tokens), sum(cost)
    FROM g GROUP BY 1, 2, 3, 4, 5, 6, 7 ORDER BY 1, 2, 3, 4, 5, 6, 7
    ON CONFLICT ("orgId", "dekad", "keyId", "teamId", "userId", "upstreamId", "toolName") DO UPDATE SET
      "calls" = "UsageCallDekadRollup"."calls" + EXCLUDED."calls",
      "errors" = "UsageCallDekadRollup"."errors" + EXCLUDED."errors",
      "outputTokens" = "UsageCallDekadRollup"."outputTokens" + EXCLUDED."outputTokens",
      "costMicros" = "UsageCallDekadRollup"."costMicros" + EXCLUDED."costMicros"
  ),
  -- The same per user (a user's keys summed: team, user, upstream, tool), by local month and dekad:
  -- users (or teams) by tool read these, a user's keys overlapping in their tools (~3x fewer rows).
  user_call_months AS (
    INSERT INTO "UsageUserCallMonthRollup" ("orgId", "month", "userId", "teamId", "upstreamId", "toolName", "calls", "errors", "outputTokens", "costMicros")
    SELECT org, date_trunc('month', day)::date, usr, team, up, tool, sum(calls), sum(errors), sum(tokens), sum(cost)
    FROM g GROUP BY 1, 2, 3, 4, 5, 6 ORDER BY 1, 2, 3, 4, 5, 6
    ON CONFLICT ("orgId", "month", "userId", "teamId", "upstreamId", "toolName") DO UPDATE SET
      "calls" = "UsageUserCallMonthRollup"."calls" + EXCLUDED."calls",
      "errors" = "UsageUserCallMonthRollup"."errors" + EXCLUDED."errors",
      "outputTokens" = "UsageUserCallMonthRollup"."outputTokens" + EXCLUDED."outputTokens",
      "costMicros" = "UsageUserCallMonthRollup"."costMicros" + EXCLUDED."costMicros"
  ),
  user_call_dekads AS (
    INSERT INTO "UsageUserCallDekadRollup" ("orgId", "dekad", "userId", "teamId", "upstreamId", "toolName", "calls", "errors", "outputTokens", "costMicros")
    SELECT org, date_trunc('month', day)::date + LEAST((extract(day FROM day)::int - 1) / 10, 2) * 10, usr, team, up, tool,
           sum(calls), sum(errors), sum(tokens), sum(cost)
    FROM g GROUP BY 1, 2, 3, 4, 5, 6 ORDER BY 1, 2, 3, 4, 5, 6
    ON CONFLICT ("orgId", "dekad", "userId", "teamId", "upstreamId", "toolName") DO UPDATE SET
      "calls" = "UsageUserCallDekadRollup"."calls" + EXCLUDED."calls",
      "errors" = "UsageUserCallDekadRollup"."errors" + EXCLUDED."errors",
      "outputTokens" = "UsageUserCallDekadRollup"."outputTokens" + EXCLUDED."outputTokens",
      "costMicros" = "UsageUserCallDekadRollup"."costMicros" + EXCLUDED."costMicros"
  ),
  -- Per team, tool and the key's tag set now (a tag change moves the key's sums:
  -- tollgate_usage_key_tags_moved), each key's tags read once: the four tool-by-tag rollups below
  -- sum these groups, not the batch's per-key ones.
  t AS MATERIALIZED (
    SELECT g.org, g.day, g.team, g.up, g.tool, COALESCE(vk."tags", '{}') AS tags,
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
    SELECT org, date_trunc('month', day)::date, up, tool, tags, sum(calls), sum(errors), sum(tokens), sum(cost)
    FROM t GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5
    ON CONFLICT ("orgId", "month", "upstreamId", "toolName", "tags") DO UPDATE SET
      "calls" = "UsageToolTagMonthRollup"."calls" + EXCLUDED."calls",
      "errors" = "UsageToolTagMonthRollup"."errors" + EXCLUDED."errors",
      "outputTokens" = "UsageToolTagMonthRollup"."outputTokens" + EXCLUDED."outputTokens",
      "costMicros" = "UsageToolTagMonthRollup"."costMicros" + EXCLUDED."costMicros"
  ),
  -- The same per team, by day and by month: a team's reports across tools and tags read its own
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
    SELECT org, date_trunc('month', day)::date, team, up, tool, tags, sum(calls), sum(errors), sum(tokens), sum(cost)
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
    FROM g CROSS JOIN LATERAL (VALUES ('ORG'::"BudgetScope", g.org), ('TEAM', g.team), ('USER', g.usr), ('KEY', g.key)) AS s(scope, id)
    GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
    ON CONFLICT ("orgId", "scope", "scopeId") DO UPDATE SET
      "calls" = "UsageScopeTotal"."calls" + EXCLUDED."calls",
      "costMicros" = "UsageScopeTotal"."costMicros" + EXCLUDED."costMicros"
  )
  SELECT 1 INTO r;
  RETURN NULL;
END $body$;

CREATE TRIGGER "UsageEvent_report_rollups" AFTER INSERT ON "UsageEvent" REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION tollgate_usage_rollups_on_insert();

-- tollgate_rebuild_usage_rollups(target, only_day): the one rebuild of an org's rollups from the
-- ledger still held (retention took the rest into "UsageLedgerClosing", which stays as it is): the
-- report rollups by local day (and the months and dekads of those with such rows) and UsageDailyRollup by UTC day. only_day NULL rebuilds them all
-- (the worker's upkeep after a zone change, or an admin's repair of everything); a day rebuilds that
-- local day of the report rollups and that UTC day of UsageDailyRollup (an admin's repair). Rollups
-- not in the org's zone now are rebuilt whole, whatever the day. UsageDailyRollup keeps the days of
-- months retention dropped (tier scores read them; the ledger no longer can).
CREATE OR REPLACE FUNCTION tollgate_rebuild_usage_rollups(target uuid, only_day date DEFAULT NULL::date) RETURNS void LANGUAGE plpgsql AS $body$
DECLARE
  zone TEXT;
  covered TEXT;
  lo TIMESTAMP;
  hi TIMESTAMP;
  only_dekad DATE;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended('tollgate:usage-rollup:' || target::text, 0));
  SELECT o."timeZone" INTO zone FROM "Organization" o WHERE o."id" = target;
  zone := COALESCE(zone, 'UTC');
  SELECT c."timeZone" INTO covered FROM "UsageRollupCoverage" c WHERE c."orgId" = target;
  IF covered IS DISTINCT FROM zone THEN
    only_day := NULL;
  END IF;
  -- The ledger's rows of the local day (the trigger's day of a row, inverted).
  lo := (only_day::timestamp AT TIME ZONE zone) AT TIME ZONE 'UTC';
  hi := ((only_day + 1)::timestamp AT TIME ZONE zone) AT TIME ZONE 'UTC';
  DELETE FROM "UsageKeyDayRollup" WHERE "orgId" = target AND (only_day IS NULL OR "day" = only_day);
  DELETE FROM "UsageToolDayRollup" WHERE "orgId" = target AND (only_day IS NULL OR "day" = only_day);
  DELETE FROM "UsageCallDayRollup" WHERE "orgId" = target AND (only_day IS NULL OR "day" = only_day);
  DELETE FROM "UsageToolTagDayRollup" WHERE "orgId" = target AND (only_day IS NULL OR "day" = only_day);
  DELETE FROM "UsageTeamToolTagDayRollup" WHERE "orgId" = target AND (only_day IS NULL OR "day" = only_day);
  INSERT INTO "UsageCallDayRollup" ("orgId", "day", "keyId", "teamId", "userId", "upstreamId", "toolName", "calls", "errors", "outputTokens", "costMicros")
  SELECT e."orgId", ((e."occurredAt" AT TIME ZONE 'UTC') AT TIME ZONE zone)::date, e."keyId", e."teamId", e."userId", e."upstreamId", e."toolName",
         count(*), count(*) FILTER (WHERE e."outcome" <> 'OK'), COALESCE(sum(e."outputTokens"), 0), COALESCE(sum(e."costMicros"), 0)
  FROM "UsageEvent" e WHERE e."orgId" = target AND (only_day IS NULL OR (e."occurredAt" >= lo AND e."occurredAt" < hi))
  GROUP BY 1, 2, 3, 4, 5, 6, 7 ORDER BY 1, 2, 3, 4, 5, 6, 7;
  -- The coarser rollups from the finest one: one pass over the ledger instead of three. Every rollup
  -- is written in its key's order, as the trigger's day-by-day writes leave it: a range of days, or
  -- a key's or a team's rows of a day, on adjacent pages rather than one page a row.
  INSERT INTO "UsageKeyDayRollup" ("orgId", "day", "keyId", "teamId", "userId", "calls", "errors", "outputTokens", "costMicros")
  SELECT r."orgId", r."day", r."keyId", r."teamId", r."userId", sum(r."calls"), sum(r."errors"), sum(r."outputTokens"), sum(r."costMicros")
  FROM "UsageCallDayRollup" r WHERE r."orgId" = target AND (only_day IS NULL OR r."day" = only_day) GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5;
  INSERT INTO "UsageToolDayRollup" ("orgId", "day", "upstreamId", "toolName", "calls", "errors", "outputTokens", "costMicros")
  SELECT r."orgId", r."day", r."upstreamId", r."toolName", sum(r."calls"), sum(r."errors"), sum(r."outputTokens"), sum(r."costMicros")
  FROM "UsageCallDayRollup" r WHERE r."orgId" = target AND (only_day IS NULL OR r."day" = only_day) GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4;
  INSERT INTO "UsageToolTagDayRollup" ("orgId", "day", "upstreamId", "toolName", "tags", "calls", "errors", "outputTokens", "costMicros")
  SELECT r."orgId", r."day", r."upstreamId", r."toolName", COALESCE(vk."tags", ARRAY[]::TEXT[]),
         sum(r."calls"), sum(r."errors"), sum(r."outputTokens"), sum(r."costMicros")
  FROM "UsageCallDayRollup" r LEFT JOIN "VirtualKey" vk ON vk."id" = r."keyId"
  WHERE r."orgId" = target AND (only_day IS NULL OR r."day" = only_day) GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5;
  INSERT INTO "UsageTeamToolTagDayRollup" ("orgId", "day", "teamId", "upstreamId", "toolName", "tags", "calls", "errors", "outputTokens", "costMicros")
  SELECT r."orgId", r."day", r."teamId", r."upstreamId", r."toolName", COALESCE(vk."tags", ARRAY[]::TEXT[]),
         sum(r."calls"), sum(r."errors"), sum(r."outputTokens"), sum(r."costMicros")
  FROM "UsageCallDayRollup" r LEFT JOIN "VirtualKey" vk ON vk."id" = r."keyId"
  WHERE r."orgId" = target AND (only_day IS NULL OR r."day" = only_day) GROUP BY 1, 2, 3, 4, 5, 6 ORDER BY 1, 2, 3, 4, 5, 6;
  -- The month rows of the months rebuilt, from their day rows (a day's repair: that whole month).
  DELETE FROM "UsageCallMonthRollup" WHERE "orgId" = target AND (only_day IS NULL OR "month" = date_trunc('month', only_day)::date);
  INSERT INTO "UsageCallMonthRollup" ("orgId", "month", "keyId", "teamId", "userId", "upstreamId", "toolName", "calls", "errors", "outputTokens", "costMicros")
  SELECT r."orgId", date_trunc('month', r."day")::date, r."keyId", r."teamId", r."userId", r."upstreamId", r."toolName",
         sum(r."calls"), sum(r."errors"), sum(r."outputTokens"), sum(r."costMicros")
  FROM "UsageCallDayRollup" r
  WHERE r."orgId" = target
    AND (only_day IS NULL OR (r."day" >= date_trunc('month', only_day)::date AND r."day" < (date_trunc('month', only_day) + interval '1 month')::date))
  GROUP BY 1, 2, 3, 4, 5, 6, 7 ORDER BY 1, 2, 3, 4, 5, 6, 7;
  -- The dekad rows likewise (a day's repair: its whole dekad, the days 1-10, 11-20 or 21 to the end).
  only_dekad := date_trunc('month', only_day)::date + LEAST((extract(day FROM only_day)::int - 1) / 10, 2) * 10;
  DELETE FROM "UsageCallDekadRollup" WHERE "orgId" = target AND (only_day IS NULL OR "dekad" = only_dekad);
  INSERT INTO "UsageCallDekadRollup" ("orgId", "dekad", "keyId", "teamId", "userId", "upstreamId", "toolName", "calls", "errors", "outputTokens", "costMicros")
  SELECT r."orgId", date_trunc('month', r."day")::date + LEAST((extract(day FROM r."day")::int - 1) / 10, 2) * 10,
         r."keyId", r."teamId", r."userId", r."upstreamId", r."toolName", sum(r."calls"), sum(r."errors"), sum(r."outputTokens"), sum(r."costMicros")
  FROM "UsageCallDayRollup" r
  WHERE r."orgId" = target
    AND (only_day IS NULL OR (r."day" >= only_dekad AND r."day" < CASE WHEN extract(day FROM only_dekad) = 21
                                   THEN (date_trunc('month', only_dekad) + interval '1 month')::date ELSE only_dekad + 10 END))
  GROUP BY 1, 2, 3, 4, 5, 6, 7 ORDER BY 1, 2, 3, 4, 5, 6, 7;
  -- The per-user month and dekad rows of those months and dekads, from the per-key rows just rebuilt.
  DELETE FROM "UsageUserCallMonthRollup" WHERE "orgId" = target AND (only_day IS NULL OR "month" = date_trunc('month', only_day)::date);
  INSERT INTO "UsageUserCallMonthRollup" ("orgId", "month", "userId", "teamId", "upstreamId", "toolName", "calls", "errors", "outputTokens", "costMicros")
  SELECT r."orgId", r."month", r."userId", r."teamId", r."upstreamId", r."toolName", sum(r."calls"), sum(r."errors"), sum(r."outputTokens"), sum(r."costMicros")
  FROM "UsageCallMonthRollup" r WHERE r."orgId" = target AND (only_day IS NULL OR r."month" = date_trunc('month', only_day)::date)
  GROUP BY 1, 2, 3, 4, 5, 6 ORDER BY 1, 2, 3, 4, 5, 6;
  DELETE FROM "UsageUserCallDekadRollup" WHERE "orgId" = target AND (only_day IS NULL OR "dekad" = only_dekad);
  INSERT INTO "UsageUserCallDekadRollup" ("orgId", "dekad", "userId", "teamId", "upstreamId", "toolName", "calls", "errors", "outputTokens", "costMicros")
  SELECT r."orgId", r."dekad", r."userId", r."teamId", r."upstreamId", r."toolName", sum(r."calls"), sum(r."errors"), sum(r."outputTokens"), sum(r."costMicros")
  FROM "UsageCallDekadRollup" r WHERE r."orgId" = target AND (only_day IS NULL OR r."dekad" = only_dekad)
  GROUP BY 1, 2, 3, 4, 5, 6 ORDER BY 1, 2, 3, 4, 5, 6;
  DELETE FROM "UsageToolTagMonthRollup" WHERE "orgId" = target AND (only_day IS NULL OR "month" = date_trunc('month', only_day)::date);
  INSERT INTO "UsageToolTagMonthRollup" ("orgId", "month", "upstreamId", "toolName", "tags", "calls", "errors", "outputTokens", "costMicros")
  SELECT r."orgId", date_trunc('month', r."day")::date, r."upstreamId", r."toolName", r."tags", sum(r."calls"), sum(r."errors"), sum(r."outputTokens"), sum(r."costMicros")
  FROM "UsageToolTagDayRollup" r
  WHERE r."orgId" = target AND (only_day IS NULL OR date_trunc('month', r."day") = date_trunc('month', only_day))
  GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5;
  DELETE FROM "UsageTeamToolTagMonthRollup" WHERE "orgId" = target AND (only_day IS NULL OR "month" = date_trunc('month', only_day)::date);
  INSERT INTO "UsageTeamToolTagMonthRollup" ("orgId", "month", "teamId", "upstreamId", "toolName", "tags", "calls", "errors", "outputTokens", "costMicros")
  SELECT r."orgId", date_trunc('month', r."day")::date, r."teamId", r."upstreamId", r."toolName", r."tags", sum(r."calls"), sum(r."errors"), sum(r."outputTokens"), sum(r."costMicros")
  FROM "UsageTeamToolTagDayRollup" r
  WHERE r."orgId" = target AND (only_day IS NULL OR date_trunc('month', r."day") = date_trunc('month', only_day))
  GROUP BY 1, 2, 3, 4, 5, 6 ORDER BY 1, 2, 3, 4, 5, 6;
  -- UTC days, as the trigger adds them (a key belongs to one team and one user).
  DELETE FROM "UsageDailyRollup" d WHERE d."orgId" = target AND (only_day IS NULL OR d."day" = only_day)
    AND NOT EXISTS (SELECT 1 FROM "UsageLedgerRetention" m WHERE m."month" = date_trunc('month', d."day"::timestamp)::date);
  INSERT INTO "UsageDailyRollup" ("orgId", "day", "teamId", "userId", "keyId", "upstreamId", "toolName", "calls", "errors", "costMicros", "outputTokens", "latencyMsSum")
  SELECT e."orgId", e."occurredAt"::date, (array_agg(e."teamId"))[1], (array_agg(e."userId"))[1], e."keyId", e."upstreamId", e."toolName",
         count(*)::int, (count(*) FILTER (WHERE e."outcome" <> 'OK'))::int,
         COALESCE(sum(e."costMicros"), 0), COALESCE(sum(e."outputTokens"), 0), COALESCE(sum(e."latencyMs"), 0)
  FROM "UsageEvent" e
  WHERE e."orgId" = target AND (only_day IS NULL OR (e."occurredAt" >= only_day::timestamp AND e."occurredAt" < (only_day + 1)::timestamp))
    AND NOT EXISTS (SELECT 1 FROM "UsageLedgerRetention" m WHERE m."month" = date_trunc('month', e."occurredAt")::date)
  GROUP BY 1, 2, 5, 6, 7 ORDER BY 1, 2, 5, 6, 7;
  IF only_day IS NULL THEN
    INSERT INTO "UsageRollupCoverage" ("orgId", "timeZone", "builtAt") VALUES (target, zone, CURRENT_TIMESTAMP)
    ON CONFLICT ("orgId") DO UPDATE SET "timeZone" = EXCLUDED."timeZone", "builtAt" = EXCLUDED."builtAt";
  END IF;
END $body$;

-- A key's tags changing moves its sums (read from UsageCallDayRollup) between tag sets, under the
-- org's rollup lock held exclusively.
CREATE OR REPLACE FUNCTION tollgate_usage_key_tags_moved() RETURNS trigger LANGUAGE plpgsql AS $body$
DECLARE
  old_tags TEXT[] := COALESCE(OLD."tags", ARRAY[]::TEXT[]);
  new_tags TEXT[] := ARRAY[]::TEXT[];
BEGIN
  IF TG_OP = 'UPDATE' THEN
    new_tags := COALESCE(NEW."tags", ARRAY[]::TEXT[]);
  END IF;
  IF old_tags = new_tags THEN
    RETURN NULL;
  END IF;
  PERFORM pg_advisory_xact_lock(hashtextextended('tollgate:usage-rollup:' || OLD."orgId"::text, 0));
  -- Each statement reads the key's sums from the per-key rollup, which the move leaves as it is.
  INSERT INTO "UsageToolTagDayRollup" ("orgId", "day", "upstreamId", "toolName", "tags", "calls", "errors", "outputTokens", "costMicros")
  SELECT r."orgId", r."day", r."upstreamId", r."toolName", new_tags, sum(r."calls"), sum(r."errors"), sum(r."outputTokens"), sum(r."costMicros")
  FROM "UsageCallDayRollup" r WHERE r."orgId" = OLD."orgId" AND r."keyId" = OLD."id"
  GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
  ON CONFLICT ("orgId", "day", "upstreamId", "toolName", "tags") DO UPDATE SET
    "calls" = "UsageToolTagDayRollup"."calls" + EXCLUDED."calls",
    "errors" = "UsageToolTagDayRollup"."errors" + EXCLUDED."errors",
    "outputTokens" = "UsageToolTagDayRollup"."outputTokens" + EXCLUDED."outputTokens",
    "costMicros" = "UsageToolTagDayRollup"."costMicros" + EXCLUDED."costMicros";
  UPDATE "UsageToolTagDayRollup" t SET "calls" = t."calls" - m.calls, "errors" = t."errors" - m.errors,
    "outputTokens" = t."outputTokens" - m.tokens, "costMicros" = t."costMicros" - m.cost
  FROM (
    SELECT r."orgId", r."day", r."upstreamId", r."toolName",
           sum(r."calls") AS calls, sum(r."errors") AS errors, sum(r."outputTokens") AS tokens, sum(r."costMicros") AS cost
    FROM "UsageCallDayRollup" r WHERE r."orgId" = OLD."orgId" AND r."keyId" = OLD."id" GROUP BY 1, 2, 3, 4
  ) m
  WHERE t."orgId" = m."orgId" AND t."day" = m."day" AND t."upstreamId" = m."upstreamId" AND t."toolName" = m."toolName"
    AND t."tags" = old_tags;
  DELETE FROM "UsageToolTagDayRollup" t
  WHERE t."orgId" = OLD."orgId" AND t."tags" = old_tags AND t."calls" = 0;
  -- The same move by local month.
  INSERT INTO "UsageToolTagMonthRollup" ("orgId", "month", "upstreamId", "toolName", "tags", "calls", "errors", "outputTokens", "costMicros")
  SELECT r."orgId", date_trunc('month', r."day")::date, r."upstreamId", r."toolName", new_tags, sum(r."calls"), sum(r."errors"), sum(r."outputTokens"), sum(r."costMicros")
  FROM "UsageCallDayRollup" r WHERE r."orgId" = OLD."orgId" AND r."keyId" = OLD."id"
  GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
  ON CONFLICT ("orgId", "month", "upstreamId", "toolName", "tags") DO UPDATE SET
    "calls" = "UsageToolTagMonthRollup"."calls" + EXCLUDED."calls",
    "errors" = "UsageToolTagMonthRollup"."errors" + EXCLUDED."errors",
    "outputTokens" = "UsageToolTagMonthRollup"."outputTokens" + EXCLUDED."outputTokens",
    "costMicros" = "UsageToolTagMonthRollup"."costMicros" + EXCLUDED."costMicros";
  UPDATE "UsageToolTagMonthRollup" t SET "calls" = t."calls" - m.calls, "errors" = t."errors" - m.errors,
    "outputTokens" = t."outputTokens" - m.tokens, "costMicros" = t."costMicros" - m.cost
  FROM (
    SELECT r."orgId", date_trunc('month', r."day")::date AS "month", r."upstreamId", r."toolName",
           sum(r."calls") AS calls, sum(r."errors") AS errors, sum(r."outputTokens") AS tokens, sum(r."costMicros") AS cost
    FROM "UsageCallDayRollup" r WHERE r."orgId" = OLD."orgId" AND r."keyId" = OLD."id" GROUP BY 1, 2, 3, 4
  ) m
  WHERE t."orgId" = m."orgId" AND t."month" = m."month" AND t."upstreamId" = m."upstreamId" AND t."toolName" = m."toolName"
    AND t."tags" = old_tags;
  DELETE FROM "UsageToolTagMonthRollup" t
  WHERE t."orgId" = OLD."orgId" AND t."tags" = old_tags AND t."calls" = 0;
  -- The same moves in the team's rows, by day and by month.
  INSERT INTO "UsageTeamToolTagDayRollup" ("orgId", "day", "teamId", "upstreamId", "toolName", "tags", "calls", "errors", "outputTokens", "costMicros")
  SELECT r."orgId", r."day", r."teamId", r."upstreamId", r."toolName", new_tags, sum(r."calls"), sum(r."errors"), sum(r."outputTokens"), sum(r."costMicros")
  FROM "UsageCallDayRollup" r WHERE r."orgId" = OLD."orgId" AND r."keyId" = OLD."id"
  GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5
  ON CONFLICT ("orgId", "day", "teamId", "upstreamId", "toolName", "tags") DO UPDATE SET
    "calls" = "UsageTeamToolTagDayRollup"."calls" + EXCLUDED."calls",
    "errors" = "UsageTeamToolTagDayRollup"."errors" + EXCLUDED."errors",
    "outputTokens" = "UsageTeamToolTagDayRollup"."outputTokens" + EXCLUDED."outputTokens",
    "costMicros" = "UsageTeamToolTagDayRollup"."costMicros" + EXCLUDED."costMicros";
  UPDATE "UsageTeamToolTagDayRollup" t SET "calls" = t."calls" - m.calls, "errors" = t."errors" - m.errors,
    "outputTokens" = t."outputTokens" - m.tokens, "costMicros" = t."costMicros" - m.cost
  FROM (
    SELECT r."orgId", r."day", r."teamId", r."upstreamId", r."toolName",
           sum(r."calls") AS calls, sum(r."errors") AS errors, sum(r."outputTokens") AS tokens, sum(r."costMicros") AS cost
    FROM "UsageCallDayRollup" r WHERE r."orgId" = OLD."orgId" AND r."keyId" = OLD."id" GROUP BY 1, 2, 3, 4, 5
  ) m
  WHERE t."orgId" = m."orgId" AND t."day" = m."day" AND t."teamId" = m."teamId" AND t."upstreamId" = m."upstreamId"
    AND t."toolName" = m."toolName" AND t."tags" = old_tags;
  DELETE FROM "UsageTeamToolTagDayRollup" t
  WHERE t."orgId" = OLD."orgId" AND t."tags" = old_tags AND t."calls" = 0;
  INSERT INTO "UsageTeamToolTagMonthRollup" ("orgId", "month", "teamId", "upstreamId", "toolName", "tags", "calls", "errors", "outputTokens", "costMicros")
  SELECT r."orgId", date_trunc('month', r."day")::date, r."teamId", r."upstreamId", r."toolName", new_tags, sum(r."calls"), sum(r."errors"), sum(r."outputTokens"), sum(r."costMicros")
  FROM "UsageCallDayRollup" r WHERE r."orgId" = OLD."orgId" AND r."keyId" = OLD."id"
  GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5
  ON CONFLICT ("orgId", "month", "teamId", "upstreamId", "toolName", "tags") DO UPDATE SET
    "calls" = "UsageTeamToolTagMonthRollup"."calls" + EXCLUDED."calls",
    "errors" = "UsageTeamToolTagMonthRollup"."errors" + EXCLUDED."errors",
    "outputTokens" = "UsageTeamToolTagMonthRollup"."outputTokens" + EXCLUDED."outputTokens",
    "costMicros" = "UsageTeamToolTagMonthRollup"."costMicros" + EXCLUDED."costMicros";
  UPDATE "UsageTeamToolTagMonthRollup" t SET "calls" = t."calls" - m.calls, "errors" = t."errors" - m.errors,
    "outputTokens" = t."outputTokens" - m.tokens, "costMicros" = t."costMicros" - m.cost
  FROM (
    SELECT r."orgId", date_trunc('month', r."day")::date AS "month", r."teamId", r."upstreamId", r."toolName",
           sum(r."calls") AS calls, sum(r."errors") AS errors, sum(r."outputTokens") AS tokens, sum(r."costMicros") AS cost
    FROM "UsageCallDayRollup" r WHERE r."orgId" = OLD."orgId" AND r."keyId" = OLD."id" GROUP BY 1, 2, 3, 4, 5
  ) m
  WHERE t."orgId" = m."orgId" AND t."month" = m."month" AND t."teamId" = m."teamId" AND t."upstreamId" = m."upstreamId"
    AND t."toolName" = m."toolName" AND t."tags" = old_tags;
  DELETE FROM "UsageTeamToolTagMonthRollup" t
  WHERE t."orgId" = OLD."orgId" AND t."tags" = old_tags AND t."calls" = 0;
  RETURN NULL;
END $body$;

CREATE TRIGGER "VirtualKey_usage_tags_moved" AFTER DELETE OR UPDATE OF tags ON "VirtualKey" FOR EACH ROW EXECUTE FUNCTION tollgate_usage_key_tags_moved();

CREATE OR REPLACE FUNCTION tollgate_refused_rollup_on_insert() RETURNS trigger LANGUAGE plpgsql AS $body$
BEGIN
  INSERT INTO "RefusedCallRollup" ("orgId", "bucket", "keyId", "teamId", "userId", "toolName", "code", "calls")
  SELECT n."orgId", date_bin('15 minutes', n."occurredAt", TIMESTAMP '2000-01-01'), n."keyId", n."teamId", n."userId", n."toolName", n."code",
         sum(n."calls")
  FROM new_rows n
  GROUP BY 1, 2, 3, 4, 5, 6, 7
  ORDER BY 1, 2, 3, 4, 5, 6, 7
  ON CONFLICT ("orgId", "bucket", "keyId", "teamId", "userId", "toolName", "code") DO UPDATE SET
    "calls" = "RefusedCallRollup"."calls" + EXCLUDED."calls";
  RETURN NULL;
END $body$;

CREATE TRIGGER "RefusedCall_rollup" AFTER INSERT ON "RefusedCall" REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION tollgate_refused_rollup_on_insert();
