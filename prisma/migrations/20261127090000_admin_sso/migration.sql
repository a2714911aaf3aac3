-- Single sign-on for the admin API (hand-written).

-- Org-wide roles of people (team admin and member come from their memberships).
CREATE TYPE "OrgRole" AS ENUM ('ORG_ADMIN', 'FINANCE');
ALTER TABLE "User" ADD COLUMN "orgRole" "OrgRole";

-- Users created on first sign-in through the org's identity provider, as members of one team.
ALTER TABLE "OrgIdentityProvider" ADD COLUMN "createUsers" BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE "OrgIdentityProvider" ADD COLUMN "newUserTeamId" UUID;
