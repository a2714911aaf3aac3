import { Client } from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  cloneLedgerDatabase,
  createLedgerOrg,
  deployWithBatchesInFlight,
  insertLedgerBatch,
  LedgerDatabase,
  LedgerOrg,
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
  let ledger: LedgerDatabase;
  let org: LedgerOrg;

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
    ledger = await cloneLedgerDatabase(inject('templateDatabase'));
    org = await createLedgerOrg(ledger.db, 'Rederive', ZONE, [
      ['env:prod', 'project:a'],
      ['env:prod'],
      [],
      ['project:a'],
    ]);
  });

  afterAll(async () => {
    await ledger?.close();
  });

  it('should leave team rollups equal to the ledger after running with a batch in flight and others waiting', async () => {
    const db = ledger.db;
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

    // A batch in flight when the migration starts, the next and a key's tag move (its sums move between
    // tag sets in the team rollups) while it waits.
    await deployWithBatchesInFlight(db, ledger.connect, ledger.name, org, async () => {
      const admin = await ledger.connect();
      await admin.query(`UPDATE "VirtualKey" SET "tags" = ARRAY['env:dev'] WHERE "id" = $1`, [org.keys[1]]);
    });

    expect(await migrationApplied(db, MIGRATION)).toBe(true);
    const { rows } = await db.query<{ n: string }>(`SELECT count(*) AS n FROM "UsageEvent" WHERE "orgId" = $1`, [
      org.orgId,
    ]);
    expect(Number(rows[0].n)).toBe(3 * 400 + 300 + 300);
    expect(await lines(db, rollup('UsageTeamToolTagDayRollup', 'day'))).toEqual(await lines(db, groups('day')));
    expect(await lines(db, rollup('UsageTeamToolTagMonthRollup', 'month'))).toEqual(await lines(db, groups('month')));
  });
});
