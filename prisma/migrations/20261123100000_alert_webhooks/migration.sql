-- DropIndex
DROP INDEX "BudgetAlert_orgId_idx";

-- AlterTable
ALTER TABLE "BudgetAlert" ADD COLUMN     "deliveredWebhookIds" UUID[] DEFAULT ARRAY[]::UUID[];

-- CreateTable
CREATE TABLE "AlertWebhook" (
    "id" UUID NOT NULL,
    "orgId" UUID NOT NULL,
    "url" TEXT NOT NULL,
    "description" TEXT,
    "secretEnc" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "AlertWebhook_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "AlertWebhook_orgId_idx" ON "AlertWebhook"("orgId");

-- CreateIndex
CREATE INDEX "BudgetAlert_orgId_createdAt_idx" ON "BudgetAlert"("orgId", "createdAt");

-- AddForeignKey
ALTER TABLE "AlertWebhook" ADD CONSTRAINT "AlertWebhook_orgId_fkey" FOREIGN KEY ("orgId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

