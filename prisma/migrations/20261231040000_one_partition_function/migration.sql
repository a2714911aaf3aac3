-- tollgate_ensure_usage_partition and tollgate_ensure_refused_partition were one function written
-- twice, differing only in the table: tollgate_ensure_partition(parent, month) replaces both (source:
-- libs/usage/src/sql/ledger-partitions.sql). Its advisory lock is per parent, as the two were.
CREATE OR REPLACE FUNCTION tollgate_ensure_partition(parent TEXT, month DATE) RETURNS TEXT LANGUAGE plpgsql AS E'
DECLARE
  m DATE := date_trunc(''month'', month)::date\073
  part TEXT := parent || ''_p'' || to_char(m, ''YYYY_MM'')\073
BEGIN
  IF to_regclass(format(''%I'', part)) IS NOT NULL THEN RETURN part\073 END IF\073
  PERFORM pg_advisory_xact_lock(hashtextextended(''tollgate:partition:'' || parent, 0))\073
  -- The first caller may have committed it while this one waited.
  IF to_regclass(format(''%I'', part)) IS NOT NULL THEN RETURN part\073 END IF\073
  BEGIN
    EXECUTE format(''CREATE TABLE %I (LIKE %I INCLUDING DEFAULTS)'', part, parent)\073
  EXCEPTION WHEN duplicate_table THEN
    RETURN part\073
  END\073
  EXECUTE format(''ALTER TABLE %I ADD CONSTRAINT %I CHECK ("occurredAt" >= %L AND "occurredAt" < %L)'',
    part, part || ''_range'', m::timestamp, (m + interval ''1 month'')::timestamp)\073
  EXECUTE format(''WITH moved AS (DELETE FROM %I WHERE "occurredAt" >= %L AND "occurredAt" < %L RETURNING *) INSERT INTO %I SELECT * FROM moved'',
    parent || ''_default'', m::timestamp, (m + interval ''1 month'')::timestamp, part)\073
  EXECUTE format(''ALTER TABLE %I ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)'',
    parent, part, m::timestamp, (m + interval ''1 month'')::timestamp)\073
  EXECUTE format(''ALTER TABLE %I DROP CONSTRAINT %I'', part, part || ''_range'')\073
  RETURN part\073
END ';

DROP FUNCTION tollgate_ensure_usage_partition(DATE);
DROP FUNCTION tollgate_ensure_refused_partition(DATE);
