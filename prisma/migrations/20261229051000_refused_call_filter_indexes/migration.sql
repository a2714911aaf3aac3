-- The per-call log reads refused calls beside the ledger, with the same filters. Through
-- ("orgId", "occurredAt", "id") alone a filter that matches no refusal read every refusal in the range:
-- on 100,000 refusals a tool with none took 337 ms, a rare user's first page 32 ms, and both grow with
-- the refusals an incident writes. With these each is under 1 ms (EXPLAIN ANALYZE, docs/console.md
-- "Performance"). Created on the partitioned parent, so every partition gets them.
CREATE INDEX "RefusedCall_orgId_keyId_occurredAt_idx" ON "RefusedCall" ("orgId", "keyId", "occurredAt");
CREATE INDEX "RefusedCall_orgId_userId_occurredAt_idx" ON "RefusedCall" ("orgId", "userId", "occurredAt");
CREATE INDEX "RefusedCall_orgId_toolName_occurredAt_idx" ON "RefusedCall" ("orgId", "toolName", "occurredAt");
