-- Running totals per budget scope (hand-written: a transition-table trigger), so a TOTAL budget's
-- spend, and any sum over all of history, is one row read instead of every rollup day since the
-- first call. Function bodies are E'' strings with \073 for each semicolon: the migration runner
-- splits scripts at every one.
--
-- - "UsageScopeTotal" holds, per org and scope (the org itself, each team, user and key), the calls
--   and money of every event ever written to the ledger. Retention does not touch it: a dropped
--   month moves from the rollups into "UsageLedgerClosing" and stays in the total.
-- - A second statement trigger on the ledger's insert (beside "UsageEvent_report_rollups", in the
--   same transaction, so a batch is in the totals exactly when it is in the ledger) adds each batch.
--   A repeated event id inserts no row, so it adds nothing.
-- - The totals are filled from the ledger still held plus the closing balance, with writers locked
--   out (one statement, all or nothing): one read of the ledger, about a second per million rows.

CREATE TABLE "UsageScopeTotal" (
  "orgId" UUID NOT NULL,
  "scope" "BudgetScope" NOT NULL,
  "scopeId" UUID NOT NULL,
  "calls" BIGINT NOT NULL,
  "costMicros" BIGINT NOT NULL,
  CONSTRAINT "UsageScopeTotal_pkey" PRIMARY KEY ("orgId", "scope", "scopeId")
);

-- Each inserted batch, per org and scope, in key order (batches of several workers lock the same
-- rows in the same order, after the report rollups' rows: the rollup trigger's name sorts first).
CREATE FUNCTION tollgate_usage_totals_on_insert() RETURNS trigger LANGUAGE plpgsql AS E'
BEGIN
  INSERT INTO "UsageScopeTotal" ("orgId", "scope", "scopeId", "calls", "costMicros")
  SELECT n."orgId", s.scope, s.id, count(*), COALESCE(sum(n."costMicros"), 0)
  FROM new_rows n
  CROSS JOIN LATERAL (VALUES (''ORG''::"BudgetScope", n."orgId"), (''TEAM'', n."teamId"), (''USER'', n."userId"), (''KEY'', n."keyId")) AS s(scope, id)
  GROUP BY 1, 2, 3
  ORDER BY 1, 2, 3
  ON CONFLICT ("orgId", "scope", "scopeId") DO UPDATE SET
    "calls" = "UsageScopeTotal"."calls" + EXCLUDED."calls",
    "costMicros" = "UsageScopeTotal"."costMicros" + EXCLUDED."costMicros"\073
  RETURN NULL\073
END ';

DO E'
BEGIN
LOCK TABLE "UsageEvent" IN SHARE MODE\073
CREATE TRIGGER "UsageEvent_scope_totals"
  AFTER INSERT ON "UsageEvent" REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION tollgate_usage_totals_on_insert()\073
INSERT INTO "UsageScopeTotal" ("orgId", "scope", "scopeId", "calls", "costMicros")
SELECT a."orgId", s.scope, s.id, sum(a.calls)::bigint, sum(a."costMicros")::bigint
FROM (
  SELECT "orgId", "teamId", "userId", "keyId", count(*) AS calls, COALESCE(sum("costMicros"), 0) AS "costMicros"
  FROM "UsageEvent" GROUP BY 1, 2, 3, 4
  UNION ALL
  SELECT "orgId", "teamId", "userId", "keyId", sum("calls"), sum("costMicros")
  FROM "UsageLedgerClosing" GROUP BY 1, 2, 3, 4
) a
CROSS JOIN LATERAL (VALUES (''ORG''::"BudgetScope", a."orgId"), (''TEAM'', a."teamId"), (''USER'', a."userId"), (''KEY'', a."keyId")) AS s(scope, id)
GROUP BY 1, 2, 3\073
END ';
