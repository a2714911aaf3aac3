import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { cpSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { BaseConfig } from '@tollgate/config';
import { ledgerSpend, PrismaService, SpendScope, SpendWindow } from '@tollgate/db';
import { adminDatabaseUrl, databaseUrl, dropDatabase, migrateDatabase, REPO_ROOT, uniqueName } from '@tollgate/testing';
import { DateTime } from 'luxon';
import { Client } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/** The first migration of the partitioned ledger: the database is built up to the one before it. */
const PARTITIONS_MIGRATION = '20261225030000_usage_ledger_partitions';
const ZONES = ['UTC', 'America/New_York', 'Asia/Kolkata'];
const OUTCOMES = ['OK', 'TOOL_ERROR', 'UPSTREAM_ERROR'];
const COLUMN: Record<SpendScope, string> = { ORG: 'orgId', TEAM: 'teamId', USER: 'userId', KEY: 'keyId' };

/**
 * Upgrading an existing ledger: a database migrated to the last migration before the partitioned
 * ledger, filled as the worker of that version filled it (its INSERT, its trigger's rollups, the
 * daily rollup its job recomputed), then brought up to date with `prisma migrate deploy` as an
 * operator would. Every row, every rollup row and every budget sum must be what it was.
 */
describe('upgrading an existing ledger to the partitioned one', () => {
  const name = uniqueName('tollgate_upgrade');
  const url = databaseUrl(name);
  let db: Client;
  let prisma: PrismaService;

  beforeAll(async () => {
    const admin = new Client({ connectionString: adminDatabaseUrl() });
    await admin.connect();
    await admin.query(`CREATE DATABASE "${name}"`);
    await admin.end();
    // The schema and the migrations before the partitioned ledger, in a folder of their own.
    const dir = mkdtempSync(path.join(tmpdir(), 'tollgate-upgrade-'));
    const from = path.join(REPO_ROOT, 'prisma');
    cpSync(path.join(from, 'schema.prisma'), path.join(dir, 'schema.prisma'));
    cpSync(path.join(from, 'migrations', 'migration_lock.toml'), path.join(dir, 'migrations', 'migration_lock.toml'));
    for (const m of readdirSync(path.join(from, 'migrations')))
      if (/^\d{14}_/.test(m) && m < PARTITIONS_MIGRATION)
        cpSync(path.join(from, 'migrations', m), path.join(dir, 'migrations', m), { recursive: true });
    try {
      await promisify(execFile)(
        process.execPath,
        [
          path.join(REPO_ROOT, 'node_modules/prisma/build/index.js'),
          'migrate',
          'deploy',
          '--schema',
          path.join(dir, 'schema.prisma'),
        ],
        { cwd: REPO_ROOT, env: { ...process.env, DATABASE_URL: url, PRISMA_HIDE_UPDATE_MESSAGE: '1' } },
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    db = new Client({ connectionString: url });
    await db.connect();
  });

  afterAll(async () => {
    await prisma?.onApplicationShutdown();
    await db?.end();
    await dropDatabase(name);
  });

  it('should keep every ledger row, rollup row and budget sum when the migrations run on a filled ledger', async () => {
    const [{ partitioned }] = (
      await db.query(`SELECT relkind = 'p' AS partitioned FROM pg_class WHERE relname = 'UsageEvent'`)
    ).rows;
    expect(partitioned).toBe(false);

    // Three orgs in three zones; the third changes its zone after its rows were written, so its
    // rollups are void (reports and budgets read its ledger rows until a rebuild).
    const now = DateTime.utc();
    const orgs = ZONES.map((timeZone) => ({
      id: randomUUID(),
      timeZone,
      keys: [0, 1, 2, 3].map(() => ({ keyId: randomUUID(), teamId: '', userId: randomUUID() })),
      teams: [randomUUID(), randomUUID()],
    }));
    for (const o of orgs) {
      o.keys.forEach((k, i) => (k.teamId = o.teams[i % 2]));
      await db.query(
        `INSERT INTO "Organization" (id, name, slug, "timeZone", "updatedAt") VALUES ($1, 'o', $2, $3, now())`,
        [o.id, `o-${o.id}`, o.timeZone],
      );
    }
    // Rows of every kind: each outcome, money 0, 1 and the largest a call can cost, with and without
    // a price rule, tokens, over fourteen months back to the next month, on month and day boundaries
    // (first and last millisecond), several per key and tool.
    const instants = [
      now.minus({ months: 14 }).startOf('month'),
      now.minus({ months: 14 }).endOf('month'),
      now.minus({ months: 6 }).set({ day: 15, hour: 3 }),
      now.minus({ months: 1 }).endOf('month'),
      now.startOf('month'),
      now.minus({ days: 1 }).startOf('day'),
      now.minus({ days: 1 }).endOf('day'),
      now.minus({ hours: 1 }),
      now.plus({ months: 1 }).startOf('month').plus({ days: 2 }),
    ];
    const costs = ['0', '1', '9223372036854775', '1500', '250000'];
    const events: unknown[][] = [];
    let n = 0;
    for (const o of orgs)
      for (const at of instants)
        for (const [ki, k] of o.keys.entries()) {
          n++;
          events.push([
            `ev-${randomUUID()}`,
            o.id,
            k.teamId,
            k.userId,
            k.keyId,
            '00000000-0000-4000-8000-00000000000' + (ki % 2),
            `tool_${n % 3}`,
            OUTCOMES[n % 3],
            costs[n % costs.length],
            n % 4,
            (n * 37) % 2000,
            n % 900,
            n % 2 ? randomUUID() : null,
            at.toJSDate().toISOString(),
          ]);
        }
    // The worker of that version: its statement (batches of 20), a repeated delivery writes nothing.
    for (let i = 0; i < events.length; i += 20) await oldInsert(db, events.slice(i, i + 20));
    await oldInsert(db, events.slice(0, 5));
    const voided = orgs[2];
    await db.query(`UPDATE "Organization" SET "timeZone" = 'Europe/Berlin' WHERE id = $1`, [voided.id]);
    voided.timeZone = 'Europe/Berlin';
    const k0 = voided.keys[0];
    const late = [
      `ev-${randomUUID()}`,
      voided.id,
      k0.teamId,
      k0.userId,
      k0.keyId,
      '00000000-0000-4000-8000-000000000000',
    ];
    await oldInsert(db, [[...late, 'tool_0', 'OK', '7', 0, 1, 1, null, now.toJSDate().toISOString()]]);
    // Its usage-rollup job had recomputed UsageDailyRollup per UTC day from the ledger.
    await db.query(`
      INSERT INTO "UsageDailyRollup" ("orgId", "day", "teamId", "userId", "keyId", "upstreamId", "toolName", "calls", "errors", "costMicros", "outputTokens", "latencyMsSum")
      SELECT e."orgId", e."occurredAt"::date, (array_agg(e."teamId"))[1], (array_agg(e."userId"))[1], e."keyId", e."upstreamId", e."toolName",
             count(*)::int, (count(*) FILTER (WHERE e."outcome" <> 'OK'))::int,
             COALESCE(sum(e."costMicros"), 0), COALESCE(sum(e."outputTokens"), 0), COALESCE(sum(e."latencyMs"), 0)
      FROM "UsageEvent" e GROUP BY e."orgId", e."occurredAt"::date, e."keyId", e."upstreamId", e."toolName"`);
    const [{ coverage }] = (
      await db.query(`SELECT "timeZone" AS coverage FROM "UsageRollupCoverage" WHERE "orgId" = $1`, [voided.id])
    ).rows;
    expect(coverage).toBeNull();

    // Budget windows of every period kind in each org's calendar, summed over the old ledger's rows.
    const windows: SpendWindow[] = [];
    for (const o of orgs) {
      const local = now.setZone(o.timeZone);
      const periods = [
        { start: new Date(0), end: null },
        { start: local.startOf('day').toJSDate(), end: local.startOf('day').plus({ days: 1 }).toJSDate() },
        { start: local.startOf('week').toJSDate(), end: local.startOf('week').plus({ weeks: 1 }).toJSDate() },
        { start: local.startOf('month').toJSDate(), end: local.startOf('month').plus({ months: 1 }).toJSDate() },
        { start: local.minus({ months: 1 }).startOf('month').toJSDate(), end: local.startOf('month').toJSDate() },
        { start: local.startOf('quarter').toJSDate(), end: local.startOf('quarter').plus({ quarters: 1 }).toJSDate() },
      ];
      const scopes: [SpendScope, string][] = [
        ['ORG', o.id],
        ...o.teams.map((t) => ['TEAM', t] as [SpendScope, string]),
        ...o.keys.flatMap((k) => [
          ['USER', k.userId] as [SpendScope, string],
          ['KEY', k.keyId] as [SpendScope, string],
        ]),
      ];
      for (const [scope, scopeId] of scopes)
        for (const p of periods) windows.push({ orgId: o.id, scope, scopeId, ...p });
    }
    const sumsBefore: bigint[] = [];
    for (const w of windows) {
      const r = await db.query(
        `SELECT COALESCE(sum("costMicros"), 0)::text AS s FROM "UsageEvent"
         WHERE "orgId" = $1 AND "${COLUMN[w.scope]}" = $2 AND "occurredAt" >= $3::timestamptz AT TIME ZONE 'UTC'
           AND ($4::timestamptz IS NULL OR "occurredAt" < $4::timestamptz AT TIME ZONE 'UTC')`,
        [w.orgId, w.scopeId, w.start.toISOString(), w.end?.toISOString() ?? null],
      );
      sumsBefore.push(BigInt(r.rows[0].s));
    }
    expect(sumsBefore.some((s) => s > 0n)).toBe(true);
    const before = await snapshot(db);
    expect(before.events).toHaveLength(events.length + 1);

    await migrateDatabase(url);

    const [{ kind }] = (await db.query(`SELECT relkind AS kind FROM pg_class WHERE relname = 'UsageEvent'`)).rows;
    expect(kind).toBe('p');
    const after = await snapshot(db);
    expect(after.events).toEqual(before.events);
    expect(after.keyDay).toEqual(before.keyDay);
    expect(after.toolDay).toEqual(before.toolDay);
    expect(after.callDay).toEqual(before.callDay);
    expect(after.daily).toEqual(before.daily);
    expect(after.coverage).toEqual(before.coverage);
    // Every row is in its month's partition, none in the default one.
    const [{ inDefault }] = (await db.query(`SELECT count(*)::int AS "inDefault" FROM "UsageEvent_default"`)).rows;
    expect(inDefault).toBe(0);

    prisma = new PrismaService({ db: { url, poolSize: 2, readUrl: undefined } } as BaseConfig);
    const sumsAfter: bigint[] = [];
    for (const w of windows) sumsAfter.push((await ledgerSpend(prisma, w)).micros);
    expect(sumsAfter).toEqual(sumsBefore);
    // TOTAL budgets read the running totals the upgrade filled from the ledger.
    const total = await ledgerSpend(prisma, windows[0]);
    expect(total).toEqual({ micros: sumsBefore[0], source: 'total' });
  });
});

/** The worker's INSERT of the version before the partitioned ledger (conflict target: the id alone). */
async function oldInsert(db: Client, rows: unknown[][]): Promise<void> {
  const col = (i: number) => rows.map((r) => r[i]);
  await db.query(
    `INSERT INTO "UsageEvent" ("id", "orgId", "teamId", "userId", "keyId", "upstreamId", "toolName", "outcome", "costMicros", "inputTokens", "outputTokens", "latencyMs", "priceRuleId", "occurredAt")
     SELECT * FROM unnest($1::text[], $2::uuid[], $3::uuid[], $4::uuid[], $5::uuid[], $6::uuid[], $7::text[], $8::"UsageOutcome"[], $9::bigint[],
       $10::int[], $11::int[], $12::int[], $13::uuid[], $14::timestamp(3)[])
     ON CONFLICT ("id") DO NOTHING`,
    Array.from({ length: 14 }, (_, i) => col(i)),
  );
}

/** Every ledger row (its columns of that version) and every rollup row, in a fixed order, as text. */
async function snapshot(db: Client) {
  const rows = async (sql: string) => (await db.query(sql)).rows;
  return {
    events: await rows(
      `SELECT "id", "orgId", "teamId", "userId", "keyId", "upstreamId", "toolName", "outcome"::text, "costMicros"::text,
              "inputTokens", "outputTokens", "latencyMs", "priceRuleId", "occurredAt"::text, "recordedAt"::text
       FROM "UsageEvent" ORDER BY "id"`,
    ),
    keyDay: await rows(`SELECT *, "day"::text AS "day" FROM "UsageKeyDayRollup" ORDER BY 1, 2, 3, 4, 5`),
    toolDay: await rows(`SELECT *, "day"::text AS "day" FROM "UsageToolDayRollup" ORDER BY 1, 2, 3, 4`),
    callDay: await rows(`SELECT *, "day"::text AS "day" FROM "UsageCallDayRollup" ORDER BY 1, 2, 3, 4, 5, 6, 7`),
    daily: await rows(
      `SELECT "orgId", "day"::text, "teamId", "userId", "keyId", "upstreamId", "toolName", "calls", "errors", "costMicros"::text,
              "outputTokens"::text, "latencyMsSum"::text FROM "UsageDailyRollup" ORDER BY 1, 2, 5, 6, 7`,
    ),
    coverage: await rows(`SELECT "orgId", "timeZone" FROM "UsageRollupCoverage" ORDER BY 1`),
  };
}
