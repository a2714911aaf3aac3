import { Client } from 'pg';

/**
 * Runs `fill` (a bulk seed) with the table's indexes and primary key dropped, then builds them again
 * as they were (pg_get_indexdef / pg_get_constraintdef): one sort per index over the whole table
 * instead of millions of inserts into random pages of five btrees (a million rows took ~5 minutes at
 * load ~20 with them kept). Only for a bench's own database: nothing else may write meanwhile.
 */
export async function withoutIndexes(db: Client, table: string, fill: () => Promise<void>): Promise<void> {
  const { rows } = await db.query<{ name: string; def: string; constraint: string | null }>(
    `SELECT i.relname AS name, pg_get_indexdef(i.oid) AS def, pg_get_constraintdef(c.oid) AS "constraint"
     FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid LEFT JOIN pg_constraint c ON c.conindid = i.oid AND c.conrelid = x.indrelid
     WHERE x.indrelid = $1::regclass`,
    [`"${table}"`],
  );
  for (const r of rows)
    await db.query(r.constraint ? `ALTER TABLE "${table}" DROP CONSTRAINT "${r.name}"` : `DROP INDEX "${r.name}"`);
  await fill();
  await db.query(`SET maintenance_work_mem = '512MB'`);
  // pg_get_indexdef names a partitioned table's index `ON ONLY` it: built so, it would stay invalid on
  // the parent and exist on no partition (every ledger index but the primary key missing, each
  // filtered read a sequential scan). Plain `ON` builds it on every partition, as the migration did.
  for (const r of rows)
    await db.query(
      r.constraint
        ? `ALTER TABLE "${table}" ADD CONSTRAINT "${r.name}" ${r.constraint}`
        : r.def.replace(/ ON ONLY /, ' ON '),
    );
  await db.query(`RESET maintenance_work_mem`);
  const invalid = await db.query(
    `SELECT indexrelid::regclass::text AS name FROM pg_index WHERE indrelid = $1::regclass AND NOT indisvalid`,
    [`"${table}"`],
  );
  if (invalid.rows.length > 0)
    throw new Error(`${table}: indexes left invalid after the seed: ${invalid.rows.map((r) => r.name).join(', ')}`);
}

/**
 * What the insert trigger would have added for an org seeded with it off, from its ledger rows: the
 * three report rollups (the zone-change rebuild), the UTC daily rollup and the running totals.
 */
export async function rebuildRollups(db: Client, orgId: string): Promise<void> {
  // Millions of groups: hashed in memory rather than sorted on disk (4 MB by default).
  await db.query(`SET work_mem = '512MB'`);
  // The four report rollups (one pass over the ledger, the coarser ones summed from the finest) and
  // the UTC daily rollup: the rebuild the worker runs.
  await db.query(`SELECT tollgate_rebuild_usage_rollups($1::uuid)`, [orgId]);
  // The running totals from the key rollup (every day of every key), not from the ledger again.
  await db.query(`DELETE FROM "UsageScopeTotal" WHERE "orgId" = $1`, [orgId]);
  await db.query(
    `INSERT INTO "UsageScopeTotal" ("orgId", "scope", "scopeId", "calls", "costMicros")
     SELECT a."orgId", s.scope, s.id, sum(a.calls)::bigint, sum(a.cost)::bigint
     FROM (SELECT "orgId", "teamId", "userId", "keyId", sum("calls") AS calls, sum("costMicros") AS cost
           FROM "UsageKeyDayRollup" WHERE "orgId" = $1 GROUP BY 1, 2, 3, 4) a
     CROSS JOIN LATERAL (VALUES ('ORG'::"BudgetScope", a."orgId"), ('TEAM', a."teamId"), ('USER', a."userId"), ('KEY', a."keyId")) AS s(scope, id)
     GROUP BY 1, 2, 3`,
    [orgId],
  );
  await db.query(`RESET work_mem`);
}
