-- CreateEnum
CREATE TYPE "OutputOverflow" AS ENUM ('PAGE', 'REFUSE');

-- AlterTable
ALTER TABLE "AccessPolicy" ADD COLUMN     "outputOverflow" "OutputOverflow";

