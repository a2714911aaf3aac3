-- OAuth state that must survive (clients, grants, refresh tokens, sessions) moves out of the
-- money path's Redis into Postgres, with an expiry on every row, and email domains claimed per org.

-- CreateTable
CREATE TABLE "OrgEmailDomain" (
    "domain" TEXT NOT NULL,
    "orgId" UUID NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "OrgEmailDomain_pkey" PRIMARY KEY ("domain")
);

-- CreateTable
CREATE TABLE "OAuthClient" (
    "clientId" TEXT NOT NULL,
    "metadata" JSONB NOT NULL,
    "sourceHash" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "usedAt" TIMESTAMP(3),
    "expiresAt" TIMESTAMP(3),

    CONSTRAINT "OAuthClient_pkey" PRIMARY KEY ("clientId")
);

-- CreateTable
CREATE TABLE "OAuthRecord" (
    "model" TEXT NOT NULL,
    "idHash" TEXT NOT NULL,
    "payload" JSONB NOT NULL,
    "grantId" TEXT,
    "uidHash" TEXT,
    "expiresAt" TIMESTAMP(3),
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "OAuthRecord_pkey" PRIMARY KEY ("model","idHash")
);

-- CreateTable
CREATE TABLE "OAuthGrantKey" (
    "grantIdHash" TEXT NOT NULL,
    "orgId" UUID NOT NULL,
    "userId" UUID NOT NULL,
    "teamId" UUID NOT NULL,
    "clientId" TEXT NOT NULL,
    "clientName" TEXT NOT NULL,
    "redirectHost" TEXT NOT NULL,
    "keyId" UUID,
    "expiresAt" TIMESTAMP(3) NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "OAuthGrantKey_pkey" PRIMARY KEY ("grantIdHash")
);

-- CreateTable
CREATE TABLE "AdminSession" (
    "idHash" TEXT NOT NULL,
    "data" JSONB NOT NULL,
    "idleEndsAt" TIMESTAMP(3) NOT NULL,
    "endsAt" TIMESTAMP(3) NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "AdminSession_pkey" PRIMARY KEY ("idHash")
);

-- CreateIndex
CREATE INDEX "OrgEmailDomain_orgId_idx" ON "OrgEmailDomain"("orgId");

-- CreateIndex
CREATE INDEX "OAuthClient_sourceHash_createdAt_idx" ON "OAuthClient"("sourceHash", "createdAt");

-- CreateIndex
CREATE INDEX "OAuthClient_expiresAt_idx" ON "OAuthClient"("expiresAt");

-- CreateIndex
CREATE INDEX "OAuthRecord_grantId_idx" ON "OAuthRecord"("grantId");

-- CreateIndex
CREATE INDEX "OAuthRecord_uidHash_idx" ON "OAuthRecord"("uidHash");

-- CreateIndex
CREATE INDEX "OAuthRecord_expiresAt_idx" ON "OAuthRecord"("expiresAt");

-- CreateIndex
CREATE INDEX "OAuthGrantKey_expiresAt_idx" ON "OAuthGrantKey"("expiresAt");

-- CreateIndex
CREATE INDEX "AdminSession_endsAt_idx" ON "AdminSession"("endsAt");

-- AddForeignKey
ALTER TABLE "OrgEmailDomain" ADD CONSTRAINT "OrgEmailDomain_orgId_fkey" FOREIGN KEY ("orgId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;
