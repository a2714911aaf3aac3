-- The ledger's primary key leads with the org and the time: ("orgId", "occurredAt", "id") INCLUDE
-- ("costMicros") serves what ("orgId", "occurredAt") INCLUDE ("costMicros") served (the org's call log
-- newest first, now in the log's full order, the budget sums' off-midnight ends, reports of orgs whose
-- rollups are being rebuilt), so that index goes: one btree fewer for every ledger write. An event id
-- still writes one row: an id always comes with the same org and time (the edge fixes all three), so a
-- repeat meets the key (the worker's COPY, then its INSERT ... ON CONFLICT on the new key), and the
-- budget reconcile looks outbox events up by org, time and id.
ALTER TABLE "UsageEvent" DROP CONSTRAINT "UsageEvent_pkey";
DROP INDEX IF EXISTS "UsageEvent_orgId_occurredAt_idx";
ALTER TABLE "UsageEvent" ADD CONSTRAINT "UsageEvent_pkey" PRIMARY KEY ("orgId", "occurredAt", "id") INCLUDE ("costMicros");
