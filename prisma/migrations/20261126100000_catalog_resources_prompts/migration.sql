-- Resources, resource templates and prompts of each upstream, pinned and reviewed like tools.
CREATE TYPE "CatalogEntryKind" AS ENUM ('RESOURCE', 'RESOURCE_TEMPLATE', 'PROMPT');

CREATE TABLE "CatalogEntry" (
    "id" UUID NOT NULL,
    "orgId" UUID NOT NULL,
    "upstreamId" UUID NOT NULL,
    "kind" "CatalogEntryKind" NOT NULL,
    "key" TEXT NOT NULL,
    "definition" JSONB NOT NULL,
    "definitionHash" TEXT NOT NULL,
    "pinnedDefinition" JSONB,
    "pinnedHash" TEXT,
    "reviewStatus" "ToolReviewStatus" NOT NULL DEFAULT 'APPROVED',
    "removedAt" TIMESTAMP(3),
    "firstSeenAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "CatalogEntry_pkey" PRIMARY KEY ("id")
);

CREATE INDEX "CatalogEntry_orgId_idx" ON "CatalogEntry"("orgId");
CREATE UNIQUE INDEX "CatalogEntry_upstreamId_kind_key_key" ON "CatalogEntry"("upstreamId", "kind", "key");
ALTER TABLE "CatalogEntry" ADD CONSTRAINT "CatalogEntry_orgId_fkey" FOREIGN KEY ("orgId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "CatalogEntry" ADD CONSTRAINT "CatalogEntry_upstreamId_fkey" FOREIGN KEY ("upstreamId") REFERENCES "UpstreamServer"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- An upstream whose tools and prompts reach agents under their own names.
ALTER TABLE "UpstreamServer" ADD COLUMN "exposeUnprefixed" BOOLEAN NOT NULL DEFAULT false;

-- Allow and deny lists of their own for resources and prompts.
ALTER TABLE "AccessPolicy" ADD COLUMN "resourceAllow" TEXT[] DEFAULT ARRAY[]::TEXT[],
    ADD COLUMN "resourceDeny" TEXT[] DEFAULT ARRAY[]::TEXT[],
    ADD COLUMN "promptAllow" TEXT[] DEFAULT ARRAY[]::TEXT[],
    ADD COLUMN "promptDeny" TEXT[] DEFAULT ARRAY[]::TEXT[];
