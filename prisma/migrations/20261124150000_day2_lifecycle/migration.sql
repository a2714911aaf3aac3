-- Day-2 administration: upstream lifecycle (review override, paused sync, soft delete),
-- ended price rules, and versions for optimistic concurrency (ETag / If-Match).

ALTER TABLE "UpstreamServer" ADD COLUMN "autoApproveTools" BOOLEAN;
ALTER TABLE "UpstreamServer" ADD COLUMN "syncPaused" BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE "UpstreamServer" ADD COLUMN "deletedAt" TIMESTAMP(3);
ALTER TABLE "UpstreamServer" ADD COLUMN "version" INTEGER NOT NULL DEFAULT 1;

-- A deleted upstream keeps its namespace (reports name its past spend) but frees it for reuse.
DROP INDEX "UpstreamServer_orgId_namespace_key";
CREATE UNIQUE INDEX "UpstreamServer_orgId_namespace_live_key" ON "UpstreamServer"("orgId", "namespace") WHERE "deletedAt" IS NULL;
CREATE INDEX "UpstreamServer_orgId_namespace_idx" ON "UpstreamServer"("orgId", "namespace");

ALTER TABLE "PriceRule" ADD COLUMN "effectiveUntil" TIMESTAMP(3);

ALTER TABLE "AccessPolicy" ADD COLUMN "version" INTEGER NOT NULL DEFAULT 1;
ALTER TABLE "Budget" ADD COLUMN "version" INTEGER NOT NULL DEFAULT 1;
