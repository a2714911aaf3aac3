-- Refused governed calls (BUDGET_EXCEEDED, TOOL_NOT_ALLOWED, RATE_LIMITED ...), drained from the
-- usage outbox beside the usage events (hand-written, Prisma cannot declare partitions). Function
-- bodies are E'' strings with \073 for each semicolon: the migration runner splits at every one.
--
-- - "RefusedCall": one row per refused call the edge logged one by one, or one row standing for
--   "calls" refusals of one key, tool and code the edge did not log one by one (over its per-key
--   cap per minute, see docs/architecture.md). Partitioned by UTC month like the ledger, with a
--   default partition, so retention drops a month at once. Key ("id", "occurredAt").
-- - "budgetId": the budget that refused a BUDGET_EXCEEDED call (budgets "blocking now").
-- - "RefusedCallRollup": refusals per org, quarter of an hour (UTC, so every zone's local midnight
--   is a bucket boundary), key (team, user), tool and code, kept by the insert trigger in the same
--   transaction: exact whatever the cap, and kept when retention drops the rows.

CREATE TABLE "RefusedCall" (
  "id" TEXT NOT NULL,
  "orgId" UUID NOT NULL,
  "teamId" UUID NOT NULL,
  "userId" UUID NOT NULL,
  "keyId" UUID NOT NULL,
  "upstreamId" UUID,
  "toolName" TEXT NOT NULL,
  "code" TEXT NOT NULL,
  "budgetId" UUID,
  "calls" INTEGER NOT NULL DEFAULT 1,
  "latencyMs" INTEGER NOT NULL,
  "occurredAt" TIMESTAMP(3) NOT NULL,
  "recordedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  CONSTRAINT "RefusedCall_pkey" PRIMARY KEY ("id", "occurredAt")
) PARTITION BY RANGE ("occurredAt");

-- The per-call log pages by ("occurredAt", "id"), newest first, within one org.
CREATE INDEX "RefusedCall_orgId_occurredAt_id_idx" ON "RefusedCall" ("orgId", "occurredAt", "id");

CREATE TABLE "RefusedCall_default" PARTITION OF "RefusedCall" DEFAULT;

CREATE TABLE "RefusedCallRollup" (
  "orgId" UUID NOT NULL,
  "bucket" TIMESTAMP(3) NOT NULL,
  "keyId" UUID NOT NULL,
  "teamId" UUID NOT NULL,
  "userId" UUID NOT NULL,
  "toolName" TEXT NOT NULL,
  "code" TEXT NOT NULL,
  "calls" BIGINT NOT NULL,
  CONSTRAINT "RefusedCallRollup_pkey" PRIMARY KEY ("orgId", "bucket", "keyId", "teamId", "userId", "toolName", "code")
);

-- A month's partition of "RefusedCall", [month, month + 1) in UTC, returns its name. Rows of that
-- month in the default partition move in (already counted: no trigger fires on the move).
CREATE FUNCTION tollgate_ensure_refused_partition(month DATE) RETURNS TEXT LANGUAGE plpgsql AS E'
DECLARE
  m DATE := date_trunc(''month'', month)::date\073
  part TEXT := ''RefusedCall_p'' || to_char(m, ''YYYY_MM'')\073
BEGIN
  IF to_regclass(format(''%I'', part)) IS NOT NULL THEN RETURN part\073 END IF\073
  PERFORM pg_advisory_xact_lock(hashtextextended(''tollgate:refused-partition'', 0))\073
  IF to_regclass(format(''%I'', part)) IS NOT NULL THEN RETURN part\073 END IF\073
  BEGIN
    EXECUTE format(''CREATE TABLE %I (LIKE "RefusedCall" INCLUDING DEFAULTS)'', part)\073
  EXCEPTION WHEN duplicate_table THEN
    RETURN part\073
  END\073
  EXECUTE format(''ALTER TABLE %I ADD CONSTRAINT %I CHECK ("occurredAt" >= %L AND "occurredAt" < %L)'',
    part, part || ''_range'', m::timestamp, (m + interval ''1 month'')::timestamp)\073
  EXECUTE format(''WITH moved AS (DELETE FROM "RefusedCall_default" WHERE "occurredAt" >= %L AND "occurredAt" < %L RETURNING *) INSERT INTO %I SELECT * FROM moved'',
    m::timestamp, (m + interval ''1 month'')::timestamp, part)\073
  EXECUTE format(''ALTER TABLE "RefusedCall" ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)'',
    part, m::timestamp, (m + interval ''1 month'')::timestamp)\073
  EXECUTE format(''ALTER TABLE %I DROP CONSTRAINT %I'', part, part || ''_range'')\073
  RETURN part\073
END ';

CREATE FUNCTION tollgate_refused_rollup_on_insert() RETURNS trigger LANGUAGE plpgsql AS E'
BEGIN
  INSERT INTO "RefusedCallRollup" ("orgId", "bucket", "keyId", "teamId", "userId", "toolName", "code", "calls")
  SELECT n."orgId", date_bin(''15 minutes'', n."occurredAt", TIMESTAMP ''2000-01-01''), n."keyId", n."teamId", n."userId", n."toolName", n."code",
         sum(n."calls")
  FROM new_rows n
  GROUP BY 1, 2, 3, 4, 5, 6, 7
  ORDER BY 1, 2, 3, 4, 5, 6, 7
  ON CONFLICT ("orgId", "bucket", "keyId", "teamId", "userId", "toolName", "code") DO UPDATE SET
    "calls" = "RefusedCallRollup"."calls" + EXCLUDED."calls"\073
  RETURN NULL\073
END ';

CREATE TRIGGER "RefusedCall_rollup"
  AFTER INSERT ON "RefusedCall" REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION tollgate_refused_rollup_on_insert();

SELECT tollgate_ensure_refused_partition((date_trunc('month', now() AT TIME ZONE 'UTC') + make_interval(months => i))::date)
FROM generate_series(0, 2) AS i;
