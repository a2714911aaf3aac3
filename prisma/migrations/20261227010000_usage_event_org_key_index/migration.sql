-- The per-call log filtered by key (GET /v1/orgs/:orgId/calls?keyId=...) read the org's ledger
-- newest first and dropped every other key's rows: a rare key's first page scanned most of 90 days
-- (1.5 s on 1,000,000 rows). With ("orgId", "keyId", "occurredAt") it reads that key's rows only,
-- newest first, from the cursor on. Created on the partitioned parent: Postgres builds it on every
-- partition (the default one too) and on each month tollgate_ensure_usage_partition attaches later.
-- The build makes the ledger's inserts wait for its duration (about 5 s per million rows on a busy 2-core machine): the edge
-- records calls through the usage outbox, which the worker drains once the index is built.
CREATE INDEX "UsageEvent_orgId_keyId_occurredAt_idx" ON "UsageEvent" ("orgId", "keyId", "occurredAt");
