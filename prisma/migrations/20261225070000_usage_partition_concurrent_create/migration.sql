-- tollgate_ensure_usage_partition, safe when two workers create the same month at once. The second
-- caller waits on the advisory lock, but its catalog lookups may not see the table the first caller
-- committed meanwhile (an advisory lock does not process catalog invalidations), so its CREATE TABLE
-- failed with "already exists" and a worker booting beside another exited. The creation now runs in
-- a block that treats an existing table as done.
CREATE OR REPLACE FUNCTION tollgate_ensure_usage_partition(month DATE) RETURNS TEXT LANGUAGE plpgsql AS E'
DECLARE
  m DATE := date_trunc(''month'', month)::date\073
  part TEXT := ''UsageEvent_p'' || to_char(m, ''YYYY_MM'')\073
BEGIN
  IF to_regclass(format(''%I'', part)) IS NOT NULL THEN RETURN part\073 END IF\073
  PERFORM pg_advisory_xact_lock(hashtextextended(''tollgate:usage-partition'', 0))\073
  IF to_regclass(format(''%I'', part)) IS NOT NULL THEN RETURN part\073 END IF\073
  BEGIN
    EXECUTE format(''CREATE TABLE %I (LIKE "UsageEvent" INCLUDING DEFAULTS)'', part)\073
  EXCEPTION WHEN duplicate_table THEN
    RETURN part\073
  END\073
  EXECUTE format(''ALTER TABLE %I ADD CONSTRAINT %I CHECK ("occurredAt" >= %L AND "occurredAt" < %L)'',
    part, part || ''_range'', m::timestamp, (m + interval ''1 month'')::timestamp)\073
  EXECUTE format(''WITH moved AS (DELETE FROM "UsageEvent_default" WHERE "occurredAt" >= %L AND "occurredAt" < %L RETURNING *) INSERT INTO %I SELECT * FROM moved'',
    m::timestamp, (m + interval ''1 month'')::timestamp, part)\073
  EXECUTE format(''ALTER TABLE "UsageEvent" ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)'',
    part, m::timestamp, (m + interval ''1 month'')::timestamp)\073
  EXECUTE format(''ALTER TABLE %I DROP CONSTRAINT %I'', part, part || ''_range'')\073
  RETURN part\073
END ';
