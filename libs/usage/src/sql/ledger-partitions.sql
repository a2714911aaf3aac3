-- The ledger's monthly partitions (UsageEvent, RefusedCall): made ahead by the worker's upkeep
-- (LedgerPartitionsService) and at boot. Source of the migrated functions, as usage-rollups.sql is
-- (same rule: edit here, apply in a migration; test/usage/usage-sql.test.ts checks they agree).

-- tollgate_ensure_partition(parent, month): the month's partition of a table partitioned by UTC
-- month of "occurredAt" (named <parent>_pYYYY_MM, beside <parent>_default), created LIKE the parent
-- and attached, the month's rows waiting in the default partition moved in. Idempotent, and safe
-- from any number of callers at once (one advisory lock per parent).
CREATE OR REPLACE FUNCTION tollgate_ensure_partition(parent text, month date) RETURNS text LANGUAGE plpgsql AS $body$
DECLARE
  m DATE := date_trunc('month', month)::date;
  part TEXT := parent || '_p' || to_char(m, 'YYYY_MM');
BEGIN
  IF to_regclass(format('%I', part)) IS NOT NULL THEN RETURN part; END IF;
  PERFORM pg_advisory_xact_lock(hashtextextended('tollgate:partition:' || parent, 0));
  -- The first caller may have committed it while this one waited.
  IF to_regclass(format('%I', part)) IS NOT NULL THEN RETURN part; END IF;
  BEGIN
    EXECUTE format('CREATE TABLE %I (LIKE %I INCLUDING DEFAULTS)', part, parent);
  EXCEPTION WHEN duplicate_table THEN
    RETURN part;
  END;
  EXECUTE format('ALTER TABLE %I ADD CONSTRAINT %I CHECK ("occurredAt" >= %L AND "occurredAt" < %L)',
    part, part || '_range', m::timestamp, (m + interval '1 month')::timestamp);
  EXECUTE format('WITH moved AS (DELETE FROM %I WHERE "occurredAt" >= %L AND "occurredAt" < %L RETURNING *) INSERT INTO %I SELECT * FROM moved',
    parent || '_default', m::timestamp, (m + interval '1 month')::timestamp, part);
  EXECUTE format('ALTER TABLE %I ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)',
    parent, part, m::timestamp, (m + interval '1 month')::timestamp);
  EXECUTE format('ALTER TABLE %I DROP CONSTRAINT %I', part, part || '_range');
  RETURN part;
END $body$;
