-- The trace id of the call a ledger row records (W3C trace id, 32 lower-case hex digits), null when
-- the call carried no trace context (telemetry off and none from the agent) or was recorded before
-- this column. Added on the partitioned parent, Postgres adds it to every partition (the default
-- one too), and tollgate_ensure_usage_partition creates later months LIKE the parent, so they have
-- it as well. The insert trigger names its columns and is unaffected. A catalog-only change (no
-- default): no row is rewritten.
ALTER TABLE "UsageEvent" ADD COLUMN "traceId" TEXT;
