-- The per-call log filtered by user or tool (GET /v1/orgs/:orgId/calls?userId=... or ?tool=..., and
-- every call log a member opens: their own user is forced) read the org's ledger newest first through
-- ("orgId", "occurredAt") and dropped every other user's or tool's rows: on 1,000,000 rows a rare
-- user's first page took 0.2 s, a user or tool without calls in the range 3.4 to 5.2 s (the whole 90
-- days read). With these the first page reads that user's or tool's rows only, newest first, from the
-- cursor on: under 2 ms in every case (EXPLAIN ANALYZE, docs/console.md "Performance"). The query
-- compares a single id or name with = so that the planner can walk them in order.
-- Created on the partitioned parent: Postgres builds them on every partition (the default one too) and
-- on each month tollgate_ensure_usage_partition attaches later. Each build makes the ledger's inserts
-- wait for its duration (about 4 s per million rows on a busy 2-core machine): the edge records calls
-- through the usage outbox, which the worker drains once the indexes are built.
CREATE INDEX "UsageEvent_orgId_userId_occurredAt_idx" ON "UsageEvent" ("orgId", "userId", "occurredAt");
CREATE INDEX "UsageEvent_orgId_toolName_occurredAt_idx" ON "UsageEvent" ("orgId", "toolName", "occurredAt");
