-- What an agent saw and did, per session and key (issue 29): every disclosure answer (lists,
-- searches, schema and stub reads, result pages) and every call, read, get and script, drained from
-- the usage outbox beside the usage events.
--
-- - "Organization"."trailMode": OFF keeps nothing, METADATA (the default) keeps names, sizes,
--   versions and ledger links but no arguments, results or script text, FULL keeps those too
--   (scrubbed of secrets). "trailRetentionDays": the worker deletes older steps.
-- - "TrailEvent": not partitioned. Retention is per org (each its own days), so a month partition
--   could not be dropped whole anyway, and the deletes walk ("orgId", "occurredAt"). A session's
--   timeline reads ("orgId", "sessionId", "occurredAt"), a key's across sessions ("orgId", "keyId",
--   "occurredAt"). The id sorts in recording order on one edge, so ("occurredAt", "id") is the order.

CREATE TYPE "TrailMode" AS ENUM ('OFF', 'METADATA', 'FULL');

ALTER TABLE "Organization"
  ADD COLUMN "trailMode" "TrailMode" NOT NULL DEFAULT 'METADATA',
  ADD COLUMN "trailRetentionDays" INTEGER NOT NULL DEFAULT 30;

CREATE TABLE "TrailEvent" (
  "id" TEXT NOT NULL,
  "orgId" UUID NOT NULL,
  "teamId" UUID NOT NULL,
  "userId" UUID NOT NULL,
  "keyId" UUID NOT NULL,
  "sessionId" TEXT,
  "kind" TEXT NOT NULL,
  "name" TEXT NOT NULL,
  "catalogVersion" TEXT,
  "tokens" INTEGER NOT NULL,
  "ok" BOOLEAN NOT NULL,
  "code" TEXT,
  "callId" TEXT,
  "costMicros" BIGINT,
  "detail" JSONB NOT NULL,
  "content" JSONB,
  "occurredAt" TIMESTAMP(3) NOT NULL,
  "recordedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  CONSTRAINT "TrailEvent_pkey" PRIMARY KEY ("id")
);

CREATE INDEX "TrailEvent_orgId_occurredAt_id_idx" ON "TrailEvent" ("orgId", "occurredAt", "id");
CREATE INDEX "TrailEvent_orgId_sessionId_occurredAt_id_idx" ON "TrailEvent" ("orgId", "sessionId", "occurredAt", "id");
CREATE INDEX "TrailEvent_orgId_keyId_occurredAt_id_idx" ON "TrailEvent" ("orgId", "keyId", "occurredAt", "id");
