-- CreateSchema
CREATE SCHEMA IF NOT EXISTS "public";

-- CreateEnum
CREATE TYPE "AdminRole" AS ENUM ('PLATFORM_ADMIN', 'ORG_ADMIN', 'TEAM_ADMIN', 'FINANCE', 'MEMBER');

-- CreateEnum
CREATE TYPE "BudgetScope" AS ENUM ('ORG', 'TEAM', 'USER', 'KEY');

-- CreateEnum
CREATE TYPE "BudgetPeriod" AS ENUM ('DAY', 'WEEK', 'MONTH', 'QUARTER', 'TOTAL');

-- CreateEnum
CREATE TYPE "BudgetMode" AS ENUM ('HARD', 'SOFT');

-- CreateEnum
CREATE TYPE "UpstreamTransport" AS ENUM ('STDIO', 'STREAMABLE_HTTP', 'SSE');

-- CreateEnum
CREATE TYPE "UpstreamAuthMode" AS ENUM ('NONE', 'STATIC_SECRET', 'PER_USER_OAUTH');

-- CreateEnum
CREATE TYPE "ToolReviewStatus" AS ENUM ('APPROVED', 'PENDING', 'REJECTED');

-- CreateEnum
CREATE TYPE "ToolTier" AS ENUM ('HOT', 'WARM', 'STANDARD', 'COLD');

-- CreateEnum
CREATE TYPE "DisclosureMode" AS ENUM ('FULL', 'PROGRESSIVE', 'CODE', 'AUTO');

-- CreateEnum
CREATE TYPE "UsageOutcome" AS ENUM ('OK', 'TOOL_ERROR', 'UPSTREAM_ERROR');

-- CreateTable
CREATE TABLE "Organization" (
    "id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "slug" TEXT NOT NULL,
    "timeZone" TEXT NOT NULL DEFAULT 'UTC',
    "autoApproveTools" BOOLEAN NOT NULL DEFAULT true,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "Organization_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Team" (
    "id" UUID NOT NULL,
    "orgId" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "Team_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "User" (
    "id" UUID NOT NULL,
    "orgId" UUID NOT NULL,
    "email" TEXT NOT NULL,
    "name" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "User_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "TeamMember" (
    "orgId" UUID NOT NULL,
    "teamId" UUID NOT NULL,
    "userId" UUID NOT NULL,
    "isTeamAdmin" BOOLEAN NOT NULL DEFAULT false,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "TeamMember_pkey" PRIMARY KEY ("teamId","userId")
);

-- CreateTable
CREATE TABLE "VirtualKey" (
    "id" UUID NOT NULL,
    "orgId" UUID NOT NULL,
    "teamId" UUID NOT NULL,
    "userId" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "prefix" TEXT NOT NULL,
    "secretHash" TEXT NOT NULL,
    "disclosureMode" "DisclosureMode",
    "expiresAt" TIMESTAMP(3),
    "revokedAt" TIMESTAMP(3),
    "lastUsedAt" TIMESTAMP(3),
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "VirtualKey_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "AdminToken" (
    "id" UUID NOT NULL,
    "orgId" UUID,
    "role" "AdminRole" NOT NULL,
    "teamId" UUID,
    "userId" UUID,
    "name" TEXT NOT NULL,
    "prefix" TEXT NOT NULL,
    "secretHash" TEXT NOT NULL,
    "revokedAt" TIMESTAMP(3),
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "AdminToken_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Budget" (
    "id" UUID NOT NULL,
    "orgId" UUID NOT NULL,
    "scope" "BudgetScope" NOT NULL,
    "scopeId" UUID NOT NULL,
    "period" "BudgetPeriod" NOT NULL,
    "limitMicros" BIGINT NOT NULL,
    "mode" "BudgetMode" NOT NULL DEFAULT 'HARD',
    "alertThresholds" INTEGER[] DEFAULT ARRAY[80, 100]::INTEGER[],
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "Budget_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "BudgetAlert" (
    "id" UUID NOT NULL,
    "orgId" UUID NOT NULL,
    "budgetId" UUID NOT NULL,
    "periodStart" TIMESTAMP(3) NOT NULL,
    "threshold" INTEGER NOT NULL,
    "spentMicros" BIGINT NOT NULL,
    "deliveredAt" TIMESTAMP(3),
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "lastError" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "BudgetAlert_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "UpstreamServer" (
    "id" UUID NOT NULL,
    "orgId" UUID NOT NULL,
    "namespace" TEXT NOT NULL,
    "displayName" TEXT,
    "transport" "UpstreamTransport" NOT NULL,
    "command" TEXT,
    "args" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "url" TEXT,
    "settings" JSONB NOT NULL DEFAULT '{}',
    "secretsEnc" TEXT,
    "authMode" "UpstreamAuthMode" NOT NULL DEFAULT 'NONE',
    "syncIntervalSeconds" INTEGER NOT NULL DEFAULT 3600,
    "callTimeoutMs" INTEGER NOT NULL DEFAULT 30000,
    "outputTokenCap" INTEGER,
    "enabled" BOOLEAN NOT NULL DEFAULT true,
    "lastSyncAt" TIMESTAMP(3),
    "lastSyncError" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "UpstreamServer_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Tool" (
    "id" UUID NOT NULL,
    "orgId" UUID NOT NULL,
    "upstreamId" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "definition" JSONB NOT NULL,
    "definitionHash" TEXT NOT NULL,
    "pinnedDefinition" JSONB,
    "pinnedHash" TEXT,
    "reviewStatus" "ToolReviewStatus" NOT NULL DEFAULT 'APPROVED',
    "category" TEXT,
    "summary" TEXT,
    "schemaTokens" INTEGER NOT NULL DEFAULT 0,
    "summaryTokens" INTEGER NOT NULL DEFAULT 0,
    "stubTokens" INTEGER NOT NULL DEFAULT 0,
    "tierScore" DOUBLE PRECISION NOT NULL DEFAULT 0,
    "tier" "ToolTier" NOT NULL DEFAULT 'STANDARD',
    "removedAt" TIMESTAMP(3),
    "firstSeenAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "Tool_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "PriceRule" (
    "id" UUID NOT NULL,
    "orgId" UUID NOT NULL,
    "upstreamId" UUID,
    "toolPattern" TEXT NOT NULL DEFAULT '*',
    "perCallMicros" BIGINT NOT NULL DEFAULT 0,
    "perOutputTokenMicros" BIGINT NOT NULL DEFAULT 0,
    "acceptReportedCost" BOOLEAN NOT NULL DEFAULT false,
    "reportedCostCapMicros" BIGINT NOT NULL DEFAULT 0,
    "chargeFailedCalls" BOOLEAN NOT NULL DEFAULT false,
    "effectiveFrom" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "PriceRule_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "AccessPolicy" (
    "id" UUID NOT NULL,
    "orgId" UUID NOT NULL,
    "scope" "BudgetScope" NOT NULL,
    "scopeId" UUID NOT NULL,
    "allow" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "deny" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "autoExecute" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "disclosureMode" "DisclosureMode",
    "maxAnswerTokens" INTEGER,
    "maxSessionSchemaTokens" INTEGER,
    "outputTokenCap" INTEGER,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "AccessPolicy_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "RateLimit" (
    "id" UUID NOT NULL,
    "orgId" UUID NOT NULL,
    "scope" "BudgetScope" NOT NULL,
    "scopeId" UUID NOT NULL,
    "toolPattern" TEXT NOT NULL DEFAULT '*:*',
    "callsPerWindow" INTEGER,
    "windowSeconds" INTEGER NOT NULL DEFAULT 60,
    "maxConcurrent" INTEGER,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "RateLimit_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "UserConnection" (
    "id" UUID NOT NULL,
    "orgId" UUID NOT NULL,
    "userId" UUID NOT NULL,
    "upstreamId" UUID NOT NULL,
    "tokensEnc" TEXT NOT NULL,
    "encKeyId" TEXT NOT NULL,
    "scope" TEXT,
    "expiresAt" TIMESTAMP(3),
    "status" TEXT NOT NULL DEFAULT 'valid',
    "lastRefreshError" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "UserConnection_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "UsageEvent" (
    "id" TEXT NOT NULL,
    "orgId" UUID NOT NULL,
    "teamId" UUID NOT NULL,
    "userId" UUID NOT NULL,
    "keyId" UUID NOT NULL,
    "upstreamId" UUID NOT NULL,
    "toolName" TEXT NOT NULL,
    "outcome" "UsageOutcome" NOT NULL,
    "costMicros" BIGINT NOT NULL,
    "inputTokens" INTEGER NOT NULL DEFAULT 0,
    "outputTokens" INTEGER NOT NULL DEFAULT 0,
    "latencyMs" INTEGER NOT NULL,
    "priceRuleId" UUID,
    "occurredAt" TIMESTAMP(3) NOT NULL,
    "recordedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "UsageEvent_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "UsageDailyRollup" (
    "orgId" UUID NOT NULL,
    "day" DATE NOT NULL,
    "teamId" UUID NOT NULL,
    "userId" UUID NOT NULL,
    "keyId" UUID NOT NULL,
    "upstreamId" UUID NOT NULL,
    "toolName" TEXT NOT NULL,
    "calls" INTEGER NOT NULL,
    "errors" INTEGER NOT NULL,
    "costMicros" BIGINT NOT NULL,
    "outputTokens" BIGINT NOT NULL,
    "latencyMsSum" BIGINT NOT NULL,

    CONSTRAINT "UsageDailyRollup_pkey" PRIMARY KEY ("orgId","day","keyId","upstreamId","toolName")
);

-- CreateTable
CREATE TABLE "AuditEvent" (
    "id" UUID NOT NULL,
    "orgId" UUID,
    "actorId" TEXT NOT NULL,
    "action" TEXT NOT NULL,
    "targetType" TEXT NOT NULL,
    "targetId" TEXT,
    "details" JSONB NOT NULL DEFAULT '{}',
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "AuditEvent_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "Organization_slug_key" ON "Organization"("slug");

-- CreateIndex
CREATE INDEX "Team_orgId_idx" ON "Team"("orgId");

-- CreateIndex
CREATE UNIQUE INDEX "Team_orgId_name_key" ON "Team"("orgId", "name");

-- CreateIndex
CREATE INDEX "User_orgId_idx" ON "User"("orgId");

-- CreateIndex
CREATE UNIQUE INDEX "User_orgId_email_key" ON "User"("orgId", "email");

-- CreateIndex
CREATE INDEX "TeamMember_orgId_idx" ON "TeamMember"("orgId");

-- CreateIndex
CREATE UNIQUE INDEX "VirtualKey_secretHash_key" ON "VirtualKey"("secretHash");

-- CreateIndex
CREATE INDEX "VirtualKey_orgId_idx" ON "VirtualKey"("orgId");

-- CreateIndex
CREATE UNIQUE INDEX "AdminToken_secretHash_key" ON "AdminToken"("secretHash");

-- CreateIndex
CREATE INDEX "AdminToken_orgId_idx" ON "AdminToken"("orgId");

-- CreateIndex
CREATE INDEX "Budget_orgId_idx" ON "Budget"("orgId");

-- CreateIndex
CREATE UNIQUE INDEX "Budget_orgId_scope_scopeId_period_key" ON "Budget"("orgId", "scope", "scopeId", "period");

-- CreateIndex
CREATE INDEX "BudgetAlert_orgId_idx" ON "BudgetAlert"("orgId");

-- CreateIndex
CREATE UNIQUE INDEX "BudgetAlert_budgetId_periodStart_threshold_key" ON "BudgetAlert"("budgetId", "periodStart", "threshold");

-- CreateIndex
CREATE INDEX "UpstreamServer_orgId_idx" ON "UpstreamServer"("orgId");

-- CreateIndex
CREATE UNIQUE INDEX "UpstreamServer_orgId_namespace_key" ON "UpstreamServer"("orgId", "namespace");

-- CreateIndex
CREATE INDEX "Tool_orgId_idx" ON "Tool"("orgId");

-- CreateIndex
CREATE UNIQUE INDEX "Tool_upstreamId_name_key" ON "Tool"("upstreamId", "name");

-- CreateIndex
CREATE INDEX "PriceRule_orgId_effectiveFrom_idx" ON "PriceRule"("orgId", "effectiveFrom");

-- CreateIndex
CREATE INDEX "AccessPolicy_orgId_idx" ON "AccessPolicy"("orgId");

-- CreateIndex
CREATE UNIQUE INDEX "AccessPolicy_orgId_scope_scopeId_key" ON "AccessPolicy"("orgId", "scope", "scopeId");

-- CreateIndex
CREATE INDEX "RateLimit_orgId_idx" ON "RateLimit"("orgId");

-- CreateIndex
CREATE INDEX "UserConnection_orgId_idx" ON "UserConnection"("orgId");

-- CreateIndex
CREATE UNIQUE INDEX "UserConnection_userId_upstreamId_key" ON "UserConnection"("userId", "upstreamId");

-- CreateIndex
CREATE INDEX "UsageEvent_orgId_occurredAt_idx" ON "UsageEvent"("orgId", "occurredAt");

-- CreateIndex
CREATE INDEX "UsageEvent_keyId_occurredAt_idx" ON "UsageEvent"("keyId", "occurredAt");

-- CreateIndex
CREATE INDEX "AuditEvent_orgId_createdAt_idx" ON "AuditEvent"("orgId", "createdAt");

-- AddForeignKey
ALTER TABLE "Team" ADD CONSTRAINT "Team_orgId_fkey" FOREIGN KEY ("orgId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "User" ADD CONSTRAINT "User_orgId_fkey" FOREIGN KEY ("orgId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "TeamMember" ADD CONSTRAINT "TeamMember_teamId_fkey" FOREIGN KEY ("teamId") REFERENCES "Team"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "TeamMember" ADD CONSTRAINT "TeamMember_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "VirtualKey" ADD CONSTRAINT "VirtualKey_orgId_fkey" FOREIGN KEY ("orgId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "VirtualKey" ADD CONSTRAINT "VirtualKey_teamId_fkey" FOREIGN KEY ("teamId") REFERENCES "Team"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "VirtualKey" ADD CONSTRAINT "VirtualKey_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "AdminToken" ADD CONSTRAINT "AdminToken_orgId_fkey" FOREIGN KEY ("orgId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Budget" ADD CONSTRAINT "Budget_orgId_fkey" FOREIGN KEY ("orgId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "BudgetAlert" ADD CONSTRAINT "BudgetAlert_budgetId_fkey" FOREIGN KEY ("budgetId") REFERENCES "Budget"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "UpstreamServer" ADD CONSTRAINT "UpstreamServer_orgId_fkey" FOREIGN KEY ("orgId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Tool" ADD CONSTRAINT "Tool_orgId_fkey" FOREIGN KEY ("orgId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Tool" ADD CONSTRAINT "Tool_upstreamId_fkey" FOREIGN KEY ("upstreamId") REFERENCES "UpstreamServer"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "PriceRule" ADD CONSTRAINT "PriceRule_orgId_fkey" FOREIGN KEY ("orgId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "PriceRule" ADD CONSTRAINT "PriceRule_upstreamId_fkey" FOREIGN KEY ("upstreamId") REFERENCES "UpstreamServer"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "AccessPolicy" ADD CONSTRAINT "AccessPolicy_orgId_fkey" FOREIGN KEY ("orgId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "RateLimit" ADD CONSTRAINT "RateLimit_orgId_fkey" FOREIGN KEY ("orgId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "UserConnection" ADD CONSTRAINT "UserConnection_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "UserConnection" ADD CONSTRAINT "UserConnection_upstreamId_fkey" FOREIGN KEY ("upstreamId") REFERENCES "UpstreamServer"("id") ON DELETE CASCADE ON UPDATE CASCADE;

