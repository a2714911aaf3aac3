-- The per-call log filtered by team or by user reads their keys' calls through
-- ("orgId", "keyId", "occurredAt") (CallLogService.ledgerRows: a key belongs to one team and one user;
-- the keys come from UsageKeyDayRollup), so the ledger drops its team and user btrees: each cost
-- every ledger write about 3 us of Postgres' CPU an event in the worker's drain (bench:ledger), the
-- largest part of what a row costs after the heap. RefusedCall keeps its own (refusals are few).
DROP INDEX IF EXISTS "UsageEvent_orgId_teamId_occurredAt_idx";
DROP INDEX IF EXISTS "UsageEvent_orgId_userId_occurredAt_idx";
