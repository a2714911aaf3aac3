-- The team rollups re-derived with the ledger's writers locked out. Migration
-- 20261231120000_usage_team_tool_tag_rollup replaced the ledger's insert trigger in one statement
-- and filled "UsageTeamToolTagDayRollup" and "UsageTeamToolTagMonthRollup" from the per-key-and-tool
-- rollup in later ones (the runner commits each statement): a batch written in between was counted
-- twice (by the new trigger, then again by the fill) or not at all (written by the old trigger,
-- committed after the fill's snapshot). A key's tags changed in between moved sums the fill then
-- added again. That migration is left as it is (databases that applied it keep its checksum), and this
-- one rebuilds both tables, all or nothing, from what they derive from, with every writer of it or
-- of them waiting:
--
-- - the ledger (SHARE: a batch in flight commits first, with its rollups, and the next waits),
-- - "VirtualKey" (a tag move waits),
-- - "UsageCallDayRollup" (a rebuild or a retention run in flight finishes first, the next waits).
--
-- The same work as that migration's fill: one read of the per-key-and-tool rollup, as long as
-- its rows, while the ledger's writes wait for it (the outbox holds the events meanwhile).

DO E'
BEGIN
LOCK TABLE "UsageEvent", "VirtualKey", "UsageCallDayRollup" IN SHARE MODE\073
TRUNCATE "UsageTeamToolTagDayRollup", "UsageTeamToolTagMonthRollup"\073
INSERT INTO "UsageTeamToolTagDayRollup" ("orgId", "day", "teamId", "upstreamId", "toolName", "tags", "calls", "errors", "outputTokens", "costMicros")
SELECT r."orgId", r."day", r."teamId", r."upstreamId", r."toolName", COALESCE(vk."tags", ARRAY[]::TEXT[]),
       sum(r."calls"), sum(r."errors"), sum(r."outputTokens"), sum(r."costMicros")
FROM "UsageCallDayRollup" r LEFT JOIN "VirtualKey" vk ON vk."id" = r."keyId"
GROUP BY 1, 2, 3, 4, 5, 6 ORDER BY 1, 2, 3, 4, 5, 6\073
INSERT INTO "UsageTeamToolTagMonthRollup" ("orgId", "month", "teamId", "upstreamId", "toolName", "tags", "calls", "errors", "outputTokens", "costMicros")
SELECT r."orgId", date_trunc(''month'', r."day")::date, r."teamId", r."upstreamId", r."toolName", r."tags", sum(r."calls"), sum(r."errors"), sum(r."outputTokens"), sum(r."costMicros")
FROM "UsageTeamToolTagDayRollup" r
GROUP BY 1, 2, 3, 4, 5, 6 ORDER BY 1, 2, 3, 4, 5, 6\073
END ';
