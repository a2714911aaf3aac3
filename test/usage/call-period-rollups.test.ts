import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  cloneLedgerDatabase,
  createLedgerOrg,
  deployWithBatchesInFlight,
  insertLedgerBatch,
  LedgerDatabase,
  LedgerOrg,
  migrationApplied,
  migrationFunctions,
  sortedLines,
} from './ledger-fixture';

const ZONE = 'Pacific/Auckland';
const KEY_COLUMNS = ['keyId', 'teamId', 'userId', 'upstreamId', 'toolName'];
const USER_COLUMNS = ['userId', 'teamId', 'upstreamId', 'toolName'];

/** A rollup of the per-key-and-tool one by a longer period: its table, period and key columns. */
interface PeriodRollup {
  table: string;
  period: 'month' | 'dekad';
  columns: string[];
}

/** A migration that adds such rollups and fills them, and the database as it was before it. */
interface PeriodRollupMigration {
  migration: string;
  rollups: PeriodRollup[];
  /** The functions as the migrations before this one left them. */
  functionsBefore: () => string;
}

const MIGRATIONS: PeriodRollupMigration[] = [
  {
    // Dekad rows (days 1-10, 11-20, 21 to the month's end) of the per-key-and-tool rollup, from its day rows.
    migration: '20270103010000_usage_call_dekad_rollup',
    rollups: [{ table: 'UsageCallDekadRollup', period: 'dekad', columns: KEY_COLUMNS }],
    functionsBefore: () =>
      migrationFunctions('20270102010000_usage_rollups_org_locks_at_once', ['tollgate_usage_rollups_on_insert']) +
      migrationFunctions('20270101010000_usage_call_month_rollup', ['tollgate_rebuild_usage_rollups']),
  },
  {
    // Its month and dekad rows again per user (a user's keys summed), from the per-key ones.
    migration: '20270104010000_usage_user_call_rollups',
    rollups: [
      { table: 'UsageUserCallMonthRollup', period: 'month', columns: USER_COLUMNS },
      { table: 'UsageUserCallDekadRollup', period: 'dekad', columns: USER_COLUMNS },
    ],
    functionsBefore: () =>
      migrationFunctions('20270103010000_usage_call_dekad_rollup', [
        'tollgate_usage_rollups_on_insert',
        'tollgate_rebuild_usage_rollups',
      ]),
  },
];

/**
 * Each migration here adds rollups of the per-key-and-tool one by a longer period and fills them. It
 * runs through `prisma migrate deploy`, as an operator runs it, on a database that already holds a
 * ledger (70 days, in a zone whose days end at another instant than UTC's; one user with two keys in
 * one team calling the same tools), with a batch in flight when it starts and another arriving while
 * it waits: its rollups must equal the ledger's own GROUP BY by local period and their columns, and
 * later batches, an admin's repair of one day and a rebuild of everything must keep them so.
 */
describe.each(MIGRATIONS)('migration $migration on a ledger with data', ({ migration, rollups, functionsBefore }) => {
  let ledger: LedgerDatabase;
  let db: LedgerDatabase['db'];
  let org: LedgerOrg;
  const lines = (sql: string) => sortedLines(db, sql);

  const local = `((e."occurredAt" AT TIME ZONE 'UTC') AT TIME ZONE o."timeZone")::date`;
  const PERIODS = {
    month: (day: string) => `date_trunc('month', ${day})::date`,
    dekad: (day: string) =>
      `date_trunc('month', ${day})::date + LEAST((extract(day FROM ${day})::int - 1) / 10, 2) * 10`,
  };
  const ledgerRows = ({ period, columns }: PeriodRollup) => {
    const group = [PERIODS[period](local), ...columns.map((c) => `e."${c}"`)].join(', ');
    return `
    SELECT concat_ws('|', ${group}, count(*), count(*) FILTER (WHERE e."outcome" <> 'OK'), sum(e."outputTokens"), sum(e."costMicros")) AS line
    FROM "UsageEvent" e JOIN "Organization" o ON o."id" = e."orgId"
    WHERE e."orgId" = '${org.orgId}' GROUP BY ${group}`;
  };
  const rollupRows = ({ table, period, columns }: PeriodRollup) => `
    SELECT concat_ws('|', ${[period, ...columns, 'calls', 'errors', 'outputTokens', 'costMicros'].map((c) => `"${c}"`).join(', ')}) AS line
    FROM "${table}" WHERE "orgId" = '${org.orgId}'`;
  async function expectEqualLedger(): Promise<void> {
    for (const rollup of rollups)
      expect(await lines(rollupRows(rollup)), rollup.table).toEqual(await lines(ledgerRows(rollup)));
  }

  beforeAll(async () => {
    ledger = await cloneLedgerDatabase(inject('templateDatabase'));
    db = ledger.db;
    org = await createLedgerOrg(db, 'Periods', ZONE);
  });

  afterAll(() => ledger?.close());

  it('should fill its rows with a batch in flight and another waiting, then keep adding each batch', async () => {
    for (let b = 0; b < 3; b++) await insertLedgerBatch(db, org, 400, b * 400);
    // A second key of the first key's user and team, calling its tools: per-user rows sum the two.
    const second = randomUUID();
    await db.query(
      `INSERT INTO "VirtualKey" ("id", "orgId", "teamId", "userId", "name", "prefix", "secretHash", "updatedAt")
       VALUES ($1, $2, $3, $4, 'k0b', 'tg_p0b', $5, now())`,
      [second, org.orgId, org.teams[0], org.users[0], randomUUID()],
    );
    await db.query(
      `INSERT INTO "UsageEvent" ("id", "orgId", "teamId", "userId", "keyId", "upstreamId", "toolName", "outcome",
                                 "costMicros", "outputTokens", "latencyMs", "occurredAt")
       SELECT gen_random_uuid()::text, $1::uuid, $2::uuid, $3::uuid, k, $4::uuid, 'tool_' || (i % 5), 'OK', 1000 + i, i % 50, 20,
              date_trunc('hour', now()) - make_interval(mins => (i * 97) % (70 * 24 * 60))
       FROM generate_series(1, 400) i CROSS JOIN (VALUES ($5::uuid), ($6::uuid)) AS ks(k)`,
      [org.orgId, org.teams[0], org.users[0], org.upstreams[0], org.keys[0], second],
    );
    // The database as it was before this migration: its ledger and rollups, its functions, none of its rows.
    await db.query(functionsBefore());
    await db.query(`DROP TABLE ${rollups.map((r) => `"${r.table}"`).join(', ')}`);
    await db.query(`DELETE FROM "_prisma_migrations" WHERE "migration_name" = $1`, [migration]);

    await deployWithBatchesInFlight(db, ledger.connect, ledger.name, org);

    expect(await migrationApplied(db, migration)).toBe(true);
    for (const rollup of rollups) {
      const filled = await lines(rollupRows(rollup));
      // 70 days: three months or more, seven dekads or more.
      expect(new Set(filled.map((l) => l.split('|')[0])).size).toBeGreaterThanOrEqual(
        rollup.period === 'month' ? 3 : 7,
      );
      // Per user, fewer rows than per key: the two keys' calls of a tool on one row.
      if (rollup.columns === USER_COLUMNS) {
        const { rows } = await db.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM "UsageCall${rollup.period === 'month' ? 'Month' : 'Dekad'}Rollup" WHERE "orgId" = $1`,
          [org.orgId],
        );
        expect(filled.length).toBeLessThan(rows[0].n);
      }
    }
    await expectEqualLedger();

    await insertLedgerBatch(db, org, 300, 12000);
    await expectEqualLedger();
  });

  it('should rebuild a period’s rows from the day rows when an admin repairs one of its days, and all of them on a full rebuild', async () => {
    const { rows } = await db.query<{ day: string }>(
      `SELECT max("day")::text AS day FROM "UsageCallDayRollup" WHERE "orgId" = $1 AND extract(day FROM "day") > 20`,
      [org.orgId],
    );
    const day = rows[0].day;
    // Rows gone wrong: every row of the repaired day's month or dekad (the 21st to the month's end).
    const spoil = async () => {
      for (const { table, period } of rollups)
        await db.query(
          `UPDATE "${table}" SET "costMicros" = "costMicros" + 777 WHERE "orgId" = $1 AND "${period}" = ${PERIODS[period]('$2::date')}`,
          [org.orgId, day],
        );
    };
    await spoil();
    for (const rollup of rollups)
      expect(await lines(rollupRows(rollup)), rollup.table).not.toEqual(await lines(ledgerRows(rollup)));
    await db.query(`SELECT tollgate_rebuild_usage_rollups($1::uuid, $2::date)`, [org.orgId, day]);
    await expectEqualLedger();

    await spoil();
    await db.query(`SELECT tollgate_rebuild_usage_rollups($1::uuid)`, [org.orgId]);
    await expectEqualLedger();
  });
});
