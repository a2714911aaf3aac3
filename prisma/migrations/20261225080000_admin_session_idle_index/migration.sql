-- Ended admin sessions are deleted by "idleEndsAt" (never later than "endsAt"), so that is the
-- column the delete needs an index on (the one on "endsAt" served no query).
DROP INDEX "AdminSession_endsAt_idx";

CREATE INDEX "AdminSession_idleEndsAt_idx" ON "AdminSession"("idleEndsAt");
