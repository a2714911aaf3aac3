import { cloneDatabase, databaseUrl, dropDatabase } from '@tollgate/testing';
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

const MIGRATION = '20261231140000_usage_team_rollup_rederive';
const ZONE = 'Asia/Kolkata';

/**
 * Migration 20261231140000 re-derives the team rollups that 20261231120000 filled in statements of
 * their own while the ledger kept being written. Here it runs through `prisma migrate deploy`, as an
 * operator runs it, on a ledger whose team rollups are wrong (as that race leaves them), with a
 * batch in flight when it starts and another batch and a tag move arriving while it waits: once
 * all have committed, the team rollups must equal the ledger's own GROUP BY.
 */
describe('migration 20261231140000: the team rollups re-derived under the ledger lock', () => {
  let database: string;
  const clients: Client[] = [];
  let org: LedgerOrg;

  async function connect(): Promise<Client> {
    const c = new Client({ connectionString: databaseUrl(database) });
    await c.connect();
    clients.push(c);
    return c;
  }

  const insertBatch = (c: Client, n: number, seed: number) => insertLedgerBatch(c, org, n, seed);

  const groups = (period: 'day' | 'month') => {
    const local = `((e."occurredAt" AT TIME ZONE 'UTC') AT TIME ZONE o."timeZone")::date`;
    const at = period === 'day' ? local : `date_trunc('month', ${local})::date`;
    return `SELECT concat_ws('|', ${at}, e."teamId", e."upstreamId", e."toolName", COALESCE(vk."tags", '{}')::text,
                             count(*), count(*) FILTER (WHERE e."outcome" <> 'OK'), sum(e."outputTokens"), sum(e."costMicros")) AS line
            FROM "UsageEvent" e JOIN "Organization" o ON o."id" = e."orgId" LEFT JOIN "VirtualKey" vk ON vk."id" = e."keyId"
            WHERE e."orgId" = '${org.orgId}' GROUP BY ${at}, e."teamId", e."upstreamId", e."toolName", vk."tags"`;
  };
  const rollup = (table: string, period: 'day' | 'month') =>
    `SELECT concat_ws('|', "${period}", "teamId", "upstreamId", "toolName", "tags"::text, "calls", "errors", "outputTokens", "costMicros") AS line
     FROM "${table}" WHERE "orgId" = '${org.orgId}'`;

  beforeAll(async () => {
    database = await cloneDatabase(inject('templateDatabase'));
    const db = await connect();
    org = await createLedgerOrg(db, 'Rederive', ZONE, [['env:prod', 'project:a'], ['env:prod'], [], ['project:a']]);
  });

  afterAll(async () => {
    await Promise.allSettled(clients.map((c) => c.end()));
    if (database) await dropDatabase(database);
  });

  it('should leave team rollups equal to the ledger after running with a batch in flight and others waiting', async () => {
    const db = await connect();
    for (let b = 0; b < 3; b++) await insertBatch(db, 400, b * 400);
    // What the old migration's race leaves: a batch's groups counted twice, some not at all.
    await db.query(
      `UPDATE "UsageTeamToolTagDayRollup" SET "calls" = "calls" * 2, "costMicros" = "costMicros" * 2
       WHERE "orgId" = $1 AND "toolName" IN ('tool_0', 'tool_3')`,
      [org.orgId],
    );
    await db.query(`DELETE FROM "UsageTeamToolTagDayRollup" WHERE "orgId" = $1 AND "toolName" = 'tool_1'`, [org.orgId]);
    await db.query(`DELETE FROM "UsageTeamToolTagMonthRollup" WHERE "orgId" = $1 AND "toolName" = 'tool_2'`, [
      org.orgId,
    ]);
    expect(await lines(db, rollup('UsageTeamToolTagDayRollup', 'day'))).not.toEqual(await lines(db, groups('day')));
    // The database as one that applied 20261231120000 and not this one yet.
    await db.query(`DELETE FROM "_prisma_migrations" WHERE "migration_name" = $1`, [MIGRATION]);

    // A worker's batch written and not yet committed when the migration starts.
    const inFlight = await connect();
    await inFlight.query('BEGIN');
    await insertBatch(inFlight, 300, 5000);

    const migrated = deployMigrations(database);
    // The migration waits for the batch in flight: it holds the ledger's lock for writers.
    await expect.poll(() => lockWaits(db, 'UsageEvent', { mode: 'ShareLock' })).toBe(1);

    // The next batch arrives meanwhile and queues behind the migration.
    const next = await connect();
    const nextPid = (await next.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0].pid;
    const nextBatch = insertBatch(next, 300, 9000);
    await expect.poll(() => lockWaits(db, 'UsageEvent', { pid: nextPid })).toBe(1);
    // And a key's tags change (its sums move between tag sets in the team rollups).
    const admin = await connect();
    const moved = admin.query(`UPDATE "VirtualKey" SET "tags" = ARRAY['env:dev'] WHERE "id" = $1`, [org.keys[1]]);

    await inFlight.query('COMMIT');
    await migrated;
    await nextBatch;
    await moved;

    expect(await migrationApplied(db, MIGRATION)).toBe(true);
    const { rows } = await db.query<{ n: string }>(`SELECT count(*) AS n FROM "UsageEvent" WHERE "orgId" = $1`, [
      org.orgId,
    ]);
    expect(Number(rows[0].n)).toBe(3 * 400 + 300 + 300);
    expect(await lines(db, rollup('UsageTeamToolTagDayRollup', 'day'))).toEqual(await lines(db, groups('day')));
    expect(await lines(db, rollup('UsageTeamToolTagMonthRollup', 'month'))).toEqual(await lines(db, groups('month')));
  });
});
