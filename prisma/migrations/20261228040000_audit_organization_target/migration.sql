-- One spelling for the organisation as an audit target: the identity provider's rows said 'org',
-- every other writer 'organization', so a search by target type saw half the trail.
-- The API still accepts targetType=org as a filter and reads it as 'organization'.
UPDATE "AuditEvent" SET "targetType" = 'organization' WHERE "targetType" = 'org';
