-- CreateTable
CREATE TABLE "OrgIdentityProvider" (
    "orgId" UUID NOT NULL,
    "issuer" TEXT NOT NULL,
    "clientId" TEXT NOT NULL,
    "clientSecretSealed" TEXT NOT NULL,
    "emailClaim" TEXT NOT NULL DEFAULT 'email',
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "OrgIdentityProvider_pkey" PRIMARY KEY ("orgId")
);

-- AddForeignKey
ALTER TABLE "OrgIdentityProvider" ADD CONSTRAINT "OrgIdentityProvider_orgId_fkey" FOREIGN KEY ("orgId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;
