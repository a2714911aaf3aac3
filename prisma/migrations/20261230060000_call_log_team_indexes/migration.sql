-- The per-call log filtered by team (GET /v1/orgs/:orgId/calls?teamId=..., and every call log a team
-- admin opens: their own team is forced) read the org's ledger and refusals newest first through
-- ("orgId", "occurredAt") and dropped other teams' rows: a team with few calls in the range read the
-- whole range, as a rare user or tool did before 20261229050000. With these the first page reads that
-- team's rows only, newest first, from the cursor on (a single team is compared with =, see
-- refusalFilterSql). Created on the partitioned parents, so every partition gets them.
CREATE INDEX "UsageEvent_orgId_teamId_occurredAt_idx" ON "UsageEvent" ("orgId", "teamId", "occurredAt");
CREATE INDEX "RefusedCall_orgId_teamId_occurredAt_idx" ON "RefusedCall" ("orgId", "teamId", "occurredAt");
