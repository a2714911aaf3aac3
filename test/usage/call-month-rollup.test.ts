import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { promisify } from 'node:util';
import { cloneDatabase, databaseUrl, dropDatabase, REPO_ROOT } from '@tollgate/testing';
import { Client } from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';

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
  const orgId = randomUUID();
  const teams = [randomUUID(), randomUUID()];
  const users = [randomUUID(), randomUUID(), randomUUID()];
  const keys = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
  const upstreams = [randomUUID(), randomUUID()];

  /** A batch of n events in one INSERT (the ledger's statement trigger sees it as one), spread over 70 days. */
  function insertBatch(n: number, seed: number) {
    return db.query(
      `INSERT INTO "UsageEvent" ("id", "orgId", "teamId", "userId", "keyId", "upstreamId", "toolName", "outcome",
                                 "costMicros", "outputTokens", "latencyMs", "occurredAt")
       SELECT gen_random_uuid()::text, $1::uuid, ($2::uuid[])[1 + (k % 2)], ($3::uuid[])[1 + (k % 3)], ($4::uuid[])[1 + k],
              ($5::uuid[])[1 + (i % 2)], 'tool_' || (i % 5),
              (CASE WHEN i % 7 = 0 THEN 'TOOL_ERROR' ELSE 'OK' END)::"UsageOutcome",
              1000 + (i * 7919) % 5000, (i * 31) % 700, 20,
              date_trunc('hour', now()) - make_interval(mins => (i * 97) % (70 * 24 * 60))
       FROM (SELECT i, (i * 13 + $6::int) % 4 AS k FROM generate_series($6::int, $6::int + $7::int - 1) AS i) s`,
      [orgId, teams, users, keys, upstreams, seed, n],
    );
  }

  /** Rows of a query as sorted lines, to compare whole tables. */
  async function lines(sql: string): Promise<string[]> {
    return (await db.query<{ line: string }>(sql)).rows.map((r) => r.line).sort();
  }

  const month = `date_trunc('month', ((e."occurredAt" AT TIME ZONE 'UTC') AT TIME ZONE o."timeZone"))::date`;
  const ledgerMonths = `
    SELECT concat_ws('|', ${month}, e."keyId", e."teamId", e."userId", e."upstreamId", e."toolName",
                     count(*), count(*) FILTER (WHERE e."outcome" <> 'OK'), sum(e."outputTokens"), sum(e."costMicros")) AS line
    FROM "UsageEvent" e JOIN "Organization" o ON o."id" = e."orgId"
    WHERE e."orgId" = '${orgId}' GROUP BY ${month}, e."keyId", e."teamId", e."userId", e."upstreamId", e."toolName"`;
  const monthRows = `
    SELECT concat_ws('|', "month", "keyId", "teamId", "userId", "upstreamId", "toolName", "calls", "errors", "outputTokens", "costMicros") AS line
    FROM "UsageCallMonthRollup" WHERE "orgId" = '${orgId}'`;

  beforeAll(async () => {
    database = await cloneDatabase(inject('templateDatabase'));
    db = new Client({ connectionString: databaseUrl(database) });
    await db.connect();
    await db.query(
      `INSERT INTO "Organization" ("id", "name", "slug", "timeZone", "updatedAt") VALUES ($1, 'Months', $2, $3, now())`,
      [orgId, `months-${orgId.slice(0, 8)}`, ZONE],
    );
    for (const [i, id] of teams.entries())
      await db.query(`INSERT INTO "Team" ("id", "orgId", "name", "updatedAt") VALUES ($1, $2, $3, now())`, [
        id,
        orgId,
        `team-${i}`,
      ]);
    for (const [i, id] of users.entries())
      await db.query(`INSERT INTO "User" ("id", "orgId", "email", "updatedAt") VALUES ($1, $2, $3, now())`, [
        id,
        orgId,
        `u${i}@months.test`,
      ]);
    for (const [i, id] of keys.entries())
      await db.query(
        `INSERT INTO "VirtualKey" ("id", "orgId", "teamId", "userId", "name", "prefix", "secretHash", "updatedAt")
         VALUES ($1, $2, $3, $4, $5, $6, $7, now())`,
        [id, orgId, teams[i % 2], users[i % 3], `k${i}`, `tg_m${i}`, randomUUID()],
      );
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

    await promisify(execFile)(
      process.execPath,
      [path.join(REPO_ROOT, 'node_modules/prisma/build/index.js'), 'migrate', 'deploy'],
      {
        cwd: REPO_ROOT,
        env: { ...process.env, DATABASE_URL: databaseUrl(database), PRISMA_HIDE_UPDATE_MESSAGE: '1' },
      },
    );
    const applied = await db.query(
      `SELECT 1 FROM "_prisma_migrations" WHERE "migration_name" = $1 AND "finished_at" IS NOT NULL`,
      [MIGRATION],
    );
    expect(applied.rows).toHaveLength(1);
    const filled = await lines(monthRows);
    expect(new Set(filled.map((l) => l.split('|')[0])).size).toBeGreaterThanOrEqual(3);
    expect(filled).toEqual(await lines(ledgerMonths));

    await insertBatch(300, 5000);
    expect(await lines(monthRows)).toEqual(await lines(ledgerMonths));
  });

  it('should rebuild a month’s rows from its day rows when an admin repairs one of its days', async () => {
    const { rows } = await db.query<{ day: string }>(
      `SELECT max("day")::text AS day FROM "UsageCallDayRollup" WHERE "orgId" = $1`,
      [orgId],
    );
    const day = rows[0].day;
    // Rows gone wrong: the repaired day's, and every month row of its month.
    await db.query(
      `UPDATE "UsageCallDayRollup" SET "calls" = "calls" + 5 WHERE "orgId" = $1 AND "day" = $2::date AND "toolName" = 'tool_1'`,
      [orgId, day],
    );
    await db.query(
      `UPDATE "UsageCallMonthRollup" SET "costMicros" = "costMicros" + 777 WHERE "orgId" = $1 AND "month" = date_trunc('month', $2::date)::date`,
      [orgId, day],
    );
    expect(await lines(monthRows)).not.toEqual(await lines(ledgerMonths));
    await db.query(`SELECT tollgate_rebuild_usage_rollups($1::uuid, $2::date)`, [orgId, day]);
    expect(await lines(monthRows)).toEqual(await lines(ledgerMonths));
  });
});
