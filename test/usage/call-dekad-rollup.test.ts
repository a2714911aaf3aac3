import { readFileSync } from 'node:fs';
import path from 'node:path';
import { cloneDatabase, databaseUrl, dropDatabase, REPO_ROOT } from '@tollgate/testing';
import { Client } from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  createLedgerOrg,
  deployMigrations,
  insertLedgerBatch,
  LedgerOrg,
  lockWaits,
  migrationApplied,
  sortedLines as lines,
} from './ledger-fixture';

const MIGRATION = '20270103010000_usage_call_dekad_rollup';
const ZONE = 'Pacific/Auckland';
const MIGRATIONS = path.join(REPO_ROOT, 'prisma/migrations');

/** The functions as the migrations before this one left them (a database that has not applied it). */
function functionsBefore(): string {
  const trigger = readFileSync(
    path.join(MIGRATIONS, '20270102010000_usage_rollups_org_locks_at_once/migration.sql'),
    'utf8',
  );
  const months = readFileSync(path.join(MIGRATIONS, '20270101010000_usage_call_month_rollup/migration.sql'), 'utf8');
  const rebuild = /^CREATE OR REPLACE FUNCTION tollgate_rebuild_usage_rollups[\s\S]*?^END ';$/m.exec(months);
  expect(rebuild).not.toBeNull();
  return `${trigger}\n${rebuild![0]}`;
}

/**
 * Migration 20270103010000 adds dekad rows (days 1-10, 11-20, 21 to the month's end) to the
 * per-key-and-tool rollup and fills them from its day rows. Here it runs through `prisma migrate
 * deploy`, as an operator runs it, on a database that already holds a ledger (70 days, so seven
 * dekads or more, in a zone whose days end at another instant than UTC's), with a batch in flight
 * when it starts and another arriving while it waits: the dekad rows must equal the ledger's own
 * GROUP BY by local dekad, and later batches must add to them through the trigger it installs.
 */
describe('migration 20270103010000: the per-key-and-tool dekad rows on a ledger with data', () => {
  let database: string;
  const clients: Client[] = [];
  let db: Client;
  let org: LedgerOrg;

  async function connect(): Promise<Client> {
    const c = new Client({ connectionString: databaseUrl(database) });
    await c.connect();
    clients.push(c);
    return c;
  }

  const local = `((e."occurredAt" AT TIME ZONE 'UTC') AT TIME ZONE o."timeZone")::date`;
  const dekad = `date_trunc('month', ${local})::date + LEAST((extract(day FROM ${local})::int - 1) / 10, 2) * 10`;
  const ledgerDekads = () => `
    SELECT concat_ws('|', ${dekad}, e."keyId", e."teamId", e."userId", e."upstreamId", e."toolName",
                     count(*), count(*) FILTER (WHERE e."outcome" <> 'OK'), sum(e."outputTokens"), sum(e."costMicros")) AS line
    FROM "UsageEvent" e JOIN "Organization" o ON o."id" = e."orgId"
    WHERE e."orgId" = '${org.orgId}' GROUP BY ${dekad}, e."keyId", e."teamId", e."userId", e."upstreamId", e."toolName"`;
  const dekadRows = () => `
    SELECT concat_ws('|', "dekad", "keyId", "teamId", "userId", "upstreamId", "toolName", "calls", "errors", "outputTokens", "costMicros") AS line
    FROM "UsageCallDekadRollup" WHERE "orgId" = '${org.orgId}'`;

  beforeAll(async () => {
    database = await cloneDatabase(inject('templateDatabase'));
    db = await connect();
    org = await createLedgerOrg(db, 'Dekads', ZONE);
  });

  afterAll(async () => {
    await Promise.allSettled(clients.map((c) => c.end()));
    if (database) await dropDatabase(database);
  });

  it('should fill the dekad rows from the day rows with a batch in flight and another waiting, then keep adding each batch', async () => {
    for (let b = 0; b < 3; b++) await insertLedgerBatch(db, org, 400, b * 400);
    // The database as it was before this migration: its ledger and day rows, its functions, no dekad rows.
    await db.query(functionsBefore());
    await db.query(`DROP TABLE "UsageCallDekadRollup"`);
    await db.query(`DELETE FROM "_prisma_migrations" WHERE "migration_name" = $1`, [MIGRATION]);

    // A worker's batch written by the old trigger and not yet committed when the migration starts.
    const inFlight = await connect();
    await inFlight.query('BEGIN');
    await insertLedgerBatch(inFlight, org, 300, 5000);

    const migrated = deployMigrations(database);
    // The fill waits for the batch in flight: it holds the ledger's lock for writers.
    await expect.poll(() => lockWaits(db, 'UsageEvent', { mode: 'ShareLock' })).toBe(1);
    // The next batch arrives meanwhile (the new trigger is in place) and queues behind the fill.
    const next = await connect();
    const nextPid = (await next.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0].pid;
    const nextBatch = insertLedgerBatch(next, org, 300, 9000);
    await expect.poll(() => lockWaits(db, 'UsageEvent', { pid: nextPid })).toBe(1);

    await inFlight.query('COMMIT');
    await migrated;
    await nextBatch;

    expect(await migrationApplied(db, MIGRATION)).toBe(true);
    const filled = await lines(db, dekadRows());
    expect(new Set(filled.map((l) => l.split('|')[0])).size).toBeGreaterThanOrEqual(7);
    expect(filled).toEqual(await lines(db, ledgerDekads()));

    await insertLedgerBatch(db, org, 300, 12000);
    expect(await lines(db, dekadRows())).toEqual(await lines(db, ledgerDekads()));
  });

  it('should rebuild a dekad’s rows from its day rows when an admin repairs one of its days', async () => {
    const { rows } = await db.query<{ day: string }>(
      `SELECT max("day")::text AS day FROM "UsageCallDayRollup" WHERE "orgId" = $1 AND extract(day FROM "day") > 20`,
      [org.orgId],
    );
    const day = rows[0].day;
    // Rows gone wrong: every dekad row of the repaired day's dekad (the 21st to the month's end).
    await db.query(
      `UPDATE "UsageCallDekadRollup" SET "costMicros" = "costMicros" + 777
       WHERE "orgId" = $1 AND "dekad" = date_trunc('month', $2::date)::date + 20`,
      [org.orgId, day],
    );
    expect(await lines(db, dekadRows())).not.toEqual(await lines(db, ledgerDekads()));
    await db.query(`SELECT tollgate_rebuild_usage_rollups($1::uuid, $2::date)`, [org.orgId, day]);
    expect(await lines(db, dekadRows())).toEqual(await lines(db, ledgerDekads()));
  });
});
