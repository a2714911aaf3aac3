-- Day-2 administration of organisations, people, keys and admin tokens (hand-written).

-- Organisations: disabled (the edge refuses its keys), soft-deleted (kept data), and the zone
-- in force before the last time-zone change, so periods running at the change keep their bounds.
ALTER TABLE "Organization" ADD COLUMN "disabledAt" TIMESTAMP(3);
ALTER TABLE "Organization" ADD COLUMN "deletedAt" TIMESTAMP(3);
ALTER TABLE "Organization" ADD COLUMN "previousTimeZone" TEXT;
ALTER TABLE "Organization" ADD COLUMN "timeZoneChangedAt" TIMESTAMP(3);

-- Offboarded people keep their row (reports name their past spend) but get no new way in.
ALTER TABLE "User" ADD COLUMN "offboardedAt" TIMESTAMP(3);

-- Keys: tags for reports, small free-form metadata.
ALTER TABLE "VirtualKey" ADD COLUMN "tags" TEXT[] NOT NULL DEFAULT ARRAY[]::TEXT[];
ALTER TABLE "VirtualKey" ADD COLUMN "metadata" JSONB NOT NULL DEFAULT '{}';
CREATE INDEX "VirtualKey_tags_idx" ON "VirtualKey" USING GIN ("tags");

-- Admin tokens: expiry, last use (written at most once a minute), and a named owner.
ALTER TABLE "AdminToken" ADD COLUMN "expiresAt" TIMESTAMP(3);
ALTER TABLE "AdminToken" ADD COLUMN "lastUsedAt" TIMESTAMP(3);
ALTER TABLE "AdminToken" ADD COLUMN "ownerLabel" TEXT;
CREATE INDEX "AdminToken_userId_idx" ON "AdminToken"("userId");

-- Audit rows carry who acted as it was at the time: the token (id, name, prefix, role) and its person.
ALTER TABLE "AuditEvent" ADD COLUMN "actor" JSONB;
