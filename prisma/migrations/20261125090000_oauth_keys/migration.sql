-- CreateEnum
CREATE TYPE "VirtualKeyKind" AS ENUM ('STATIC', 'OAUTH');

-- AlterTable
ALTER TABLE "VirtualKey" ADD COLUMN     "kind" "VirtualKeyKind" NOT NULL DEFAULT 'STATIC',
ADD COLUMN     "oauthClientId" TEXT,
ADD COLUMN     "oauthClientName" TEXT;

-- CreateIndex
CREATE INDEX "VirtualKey_userId_oauthClientId_idx" ON "VirtualKey"("userId", "oauthClientId");
