import { cloneDatabase, databaseUrl, dropDatabase } from '@tollgate/testing';
import { Client } from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  createLedgerOrg,
  deployMigrations,
  insertLedgerBatch,
  LedgerOrg,
  migrationApplied,
  sortedLines,
} from './ledger-fixture';

const MIGRATION = '20270101010000_usage_call_month_rollup';
const ZONE = 'America/Los_Angeles';

/**
 * Migration 20270101010000 adds month rows to the per-key-and-tool rollup and fills them from its
 * day rows. Here it runs through `prisma migrate deploy`, as an operator runs it, on a database
 * that already holds a ledger (70 days, so three months or more, in a zone whose months end at
 * another instant than UTC's): the month rows must equal the ledger's own GROUP BY by local month,
 * and later batches must add to them through the trigger it installs.
 */
describe('migration 20270101010000: the per-key-and-tool month rows on a ledger with data', () => {
  let database: string;
  let db: Client;
  let org: LedgerOrg;

  const insertBatch = (n: number, seed: number) => insertLedgerBatch(db, org, n, seed);
  const lines = (sql: string) => sortedLines(db, sql);

  const month = `date_trunc('month', ((e."occurredAt" AT TIME ZONE 'UTC') AT TIME ZONE o."timeZone"))::date`;
  const ledgerMonths = () => `
    SELECT concat_ws('|', ${month}, e."keyId", e."teamId", e."userId", e."upstreamId", e."toolName",
                     count(*), count(*) FILTER (WHERE e."outcome" <> 'OK'), sum(e."outputTokens"), sum(e."costMicros")) AS line
    FROM "UsageEvent" e JOIN "Organization" o ON o."id" = e."orgId"
    WHERE e."orgId" = '${org.orgId}' GROUP BY ${month}, e."keyId", e."teamId", e."userId", e."upstreamId", e."toolName"`;
  const monthRows = () => `
    SELECT concat_ws('|', "month", "keyId", "teamId", "userId", "upstreamId", "toolName", "calls", "errors", "outputTokens", "costMicros") AS line
    FROM "UsageCallMonthRollup" WHERE "orgId" = '${org.orgId}'`;

  beforeAll(async () => {
    database = await cloneDatabase(inject('templateDatabase'));
    db = new Client({ connectionString: databaseUrl(database) });
    await db.connect();
    org = await createLedgerOrg(db, 'Months', ZONE);
  });

  afterAll(async () => {
    await db?.end();
    if (database) await dropDatabase(database);
  });

  it('should fill the month rows from the ledger’s day rows, then keep adding each batch to them', async () => {
    for (let b = 0; b < 3; b++) await insertBatch(400, b * 400);
    // The database as it was before this migration: its ledger and day rows, no month rows.
    await db.query(`DROP TABLE "UsageCallMonthRollup"`);
    await db.query(`DELETE FROM "_prisma_migrations" WHERE "migration_name" = $1`, [MIGRATION]);

    await deployMigrations(database);
    expect(await migrationApplied(db, MIGRATION)).toBe(true);
    const filled = await lines(monthRows());
    expect(new Set(filled.map((l) => l.split('|')[0])).size).toBeGreaterThanOrEqual(3);
    expect(filled).toEqual(await lines(ledgerMonths()));

    await insertBatch(300, 5000);
    expect(await lines(monthRows())).toEqual(await lines(ledgerMonths()));
  });

  it('should rebuild a month’s rows from its day rows when an admin repairs one of its days', async () => {
    const { rows } = await db.query<{ day: string }>(
      `SELECT max("day")::text AS day FROM "UsageCallDayRollup" WHERE "orgId" = $1`,
      [org.orgId],
    );
    const day = rows[0].day;
    // Rows gone wrong: the repaired day's, and every month row of its month.
    await db.query(
      `UPDATE "UsageCallDayRollup" SET "calls" = "calls" + 5 WHERE "orgId" = $1 AND "day" = $2::date AND "toolName" = 'tool_1'`,
      [org.orgId, day],
    );
    await db.query(
      `UPDATE "UsageCallMonthRollup" SET "costMicros" = "costMicros" + 777 WHERE "orgId" = $1 AND "month" = date_trunc('month', $2::date)::date`,
      [org.orgId, day],
    );
    expect(await lines(monthRows())).not.toEqual(await lines(ledgerMonths()));
    await db.query(`SELECT tollgate_rebuild_usage_rollups($1::uuid, $2::date)`, [org.orgId, day]);
    expect(await lines(monthRows())).toEqual(await lines(ledgerMonths()));
  });
});
