-- The per-call log filtered by tool reads the tool's calls through the keys that called it, day by
-- day (CallLogService.toolRows: the (key, day) pairs from UsageCallDayRollup's ("orgId", "toolName",
-- "day"), then each pair's rows through ("orgId", "keyId", "occurredAt")), so the ledger drops its
-- tool btree: it cost every ledger write 3-5 us of Postgres' CPU an event in the worker's drain
-- (bench:ledger), as the team and user btrees did. RefusedCall keeps its own (refusals are few).
DROP INDEX IF EXISTS "UsageEvent_orgId_toolName_occurredAt_idx";
