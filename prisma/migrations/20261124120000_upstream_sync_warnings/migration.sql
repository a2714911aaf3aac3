-- AlterTable
ALTER TABLE "UpstreamServer" ADD COLUMN     "lastSyncWarnings" TEXT[] DEFAULT ARRAY[]::TEXT[];
