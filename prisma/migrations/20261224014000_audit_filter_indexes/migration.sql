-- The audit search filters by action (exact or `key.*` prefix) and by target, newest first;
-- (orgId, createdAt) already serves the unfiltered trail and its keyset pages.
CREATE INDEX "AuditEvent_orgId_action_createdAt_idx" ON "AuditEvent"("orgId", "action", "createdAt");

CREATE INDEX "AuditEvent_orgId_targetId_createdAt_idx" ON "AuditEvent"("orgId", "targetId", "createdAt");
