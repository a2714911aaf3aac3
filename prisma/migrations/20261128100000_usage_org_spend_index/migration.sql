-- Budget utilisation sums an org budget's spend over its period (hand-written): the same index on
-- (orgId, occurredAt), now carrying costMicros, so the sum is an index-only scan. Prisma cannot
-- declare INCLUDE columns: the schema keeps @@index([orgId, occurredAt]) under the same name.
DROP INDEX "UsageEvent_orgId_occurredAt_idx";
CREATE INDEX "UsageEvent_orgId_occurredAt_idx" ON "UsageEvent" ("orgId", "occurredAt") INCLUDE ("costMicros");
