/**
 * `npm run bench:trail-retention`: what the agent trail's retention costs Postgres, to decide whether
 * "TrailEvent" must be partitioned by month like the ledger (issue 29). Seeds BENCH_TRAIL_ROWS steps
 * (default 1,000,000: 70 % calls, 30 % searches with five names, METADATA-sized) over 60 days for 10
 * organisations with 30 days' retention, set-based, then measures in one run:
 * - the worker's retention (`TrailRetentionService`, batched DELETEs of 5,000): time, rows a second,
 *   WAL written (the server's, so other databases' writes meanwhile count too), and the table's size
 *   before, after, and after a plain VACUUM (which keeps the space for new rows, not the disk's);
 * - the same rows in a month-partitioned copy: dropping the partitions wholly past retention (time,
 *   WAL), the only deletion partitioning makes cheap.
 */
import { Client } from 'pg';
import { performance } from 'node:perf_hooks';
import { TrailRetentionService } from '@tollgate/usage';
import type { PrismaService } from '@tollgate/db';
import { createBenchDatabase } from './support/bench-platform';

const ROWS = Number(process.env.BENCH_TRAIL_ROWS ?? 1_000_000);
const ORGS = 10;
const DAYS = 60;
const NOW = new Date('2026-11-26T00:00:00Z');

const round = (n: number, d = 1) => Math.round(n * 10 ** d) / 10 ** d;

async function lsn(db: Client): Promise<string> {
  return (await db.query(`SELECT pg_current_wal_lsn()::text AS l`)).rows[0].l as string;
}

async function walSince(db: Client, from: string): Promise<number> {
  return Number((await db.query(`SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1)::bigint AS d`, [from])).rows[0].d);
}

async function sizeMb(db: Client, table: string): Promise<number> {
  const r = await db.query(`SELECT pg_total_relation_size($1::regclass)::bigint AS b`, [`"${table}"`]);
  return round(Number(r.rows[0].b) / 1e6);
}

// One step per row of generate_series: the org, time (spread evenly over DAYS before NOW) and kind
// follow from its number, so both tables get the same rows.
const SEED_SELECT = (from: number, to: number) => `
  SELECT lpad((extract(epoch FROM at) * 1000)::bigint::text, 14, '0') || '-' || lpad(g::text, 9, '0') AS "id",
         o."id" AS "orgId", o."id" AS "teamId", o."id" AS "userId", o."id" AS "keyId",
         'session-' || (g / 20) AS "sessionId",
         CASE WHEN g % 10 < 7 THEN 'CALL' ELSE 'SEARCH' END AS "kind",
         CASE WHEN g % 10 < 7 THEN 'github__create_issue' ELSE 'tollgate__search_tools' END AS "name",
         CASE WHEN g % 10 < 7 THEN NULL ELSE 'a1b2c3d4e5f60718' END AS "catalogVersion",
         120 AS "tokens", true AS "ok", NULL AS "code",
         CASE WHEN g % 10 < 7 THEN gen_random_uuid()::text END AS "callId",
         CASE WHEN g % 10 < 7 THEN 1000 END::bigint AS "costMicros",
         CASE WHEN g % 10 < 7 THEN '{}'::jsonb
              ELSE '{"query":"create an issue","names":["github__create_issue","github__list_issues","github__get_issue","linear__create_issue","jira__create_issue"]}'::jsonb END AS "detail",
         NULL::jsonb AS "content", at AS "occurredAt", at AS "recordedAt"
  FROM generate_series(${from}, ${to}) g
  CROSS JOIN LATERAL (SELECT $1::timestamp - make_interval(secs => (g::double precision / ${ROWS}) * ${DAYS} * 86400) AS at) t
  JOIN (SELECT "id", row_number() OVER (ORDER BY "id") - 1 AS n FROM "Organization") o ON o.n = g % ${ORGS}`;

async function main(): Promise<void> {
  const database = await createBenchDatabase('trailret');
  const db = new Client({ connectionString: database.url });
  await db.connect();
  try {
    for (let i = 0; i < ORGS; i++)
      await db.query(
        `INSERT INTO "Organization" ("id", "name", "slug", "trailRetentionDays", "updatedAt") VALUES (gen_random_uuid(), $1, $1, 30, now())`,
        [`org-${i}`],
      );
    const seedStarted = performance.now();
    for (let from = 1; from <= ROWS; from += 1_000_000)
      await db.query(`INSERT INTO "TrailEvent" ${SEED_SELECT(from, Math.min(ROWS, from + 999_999))}`, [
        NOW.toISOString(),
      ]);
    const seedSeconds = (performance.now() - seedStarted) / 1000;

    // The same rows in a table partitioned by month, as the ledger is.
    await db.query(
      `CREATE TABLE "TrailEventByMonth" (LIKE "TrailEvent" INCLUDING DEFAULTS) PARTITION BY RANGE ("occurredAt")`,
    );
    await db.query(`ALTER TABLE "TrailEventByMonth" ADD PRIMARY KEY ("id", "occurredAt")`);
    for (const cols of [
      '"orgId", "occurredAt", "id"',
      '"orgId", "sessionId", "occurredAt", "id"',
      '"orgId", "keyId", "occurredAt", "id"',
      '"orgId", "callId"',
    ])
      await db.query(`CREATE INDEX ON "TrailEventByMonth" (${cols})`);
    const months: string[] = [];
    for (let m = -3; m <= 0; m++) {
      const start = new Date(Date.UTC(NOW.getUTCFullYear(), NOW.getUTCMonth() + m, 1));
      const end = new Date(Date.UTC(NOW.getUTCFullYear(), NOW.getUTCMonth() + m + 1, 1));
      const name = `TrailEventByMonth_${start.toISOString().slice(0, 7).replace('-', '')}`;
      months.push(name);
      await db.query(
        `CREATE TABLE "${name}" PARTITION OF "TrailEventByMonth" FOR VALUES FROM ('${start.toISOString()}') TO ('${end.toISOString()}')`,
      );
    }
    await db.query(`INSERT INTO "TrailEventByMonth" SELECT * FROM "TrailEvent"`);
    await db.query(`ANALYZE "TrailEvent"`);
    await db.query(`ANALYZE "TrailEventByMonth"`);

    const before = await sizeMb(db, 'TrailEvent');
    const retention = new TrailRetentionService({ pool: db } as unknown as PrismaService);
    let from = await lsn(db);
    let started = performance.now();
    const deleted = await retention.applyRetention(NOW);
    const deleteSeconds = (performance.now() - started) / 1000;
    const deleteWal = await walSince(db, from);
    const afterDelete = await sizeMb(db, 'TrailEvent');
    started = performance.now();
    await db.query(`VACUUM "TrailEvent"`);
    const vacuumSeconds = (performance.now() - started) / 1000;
    const afterVacuum = await sizeMb(db, 'TrailEvent');

    // Partitions whose whole month is past 30 days' retention go with one statement each.
    const cutoff = new Date(NOW.getTime() - 30 * 86_400_000);
    const droppable = months.filter((name) => {
      const [y, m] = [Number(name.slice(-6, -2)), Number(name.slice(-2))];
      return new Date(Date.UTC(y, m, 1)) <= cutoff;
    });
    let droppedRows = 0;
    for (const name of droppable)
      droppedRows += Number((await db.query(`SELECT count(*)::bigint AS n FROM "${name}"`)).rows[0].n);
    from = await lsn(db);
    started = performance.now();
    for (const name of droppable) await db.query(`DROP TABLE "${name}"`);
    const dropMs = performance.now() - started;
    const dropWal = await walSince(db, from);

    const figures = {
      bench: 'trail-retention',
      rows: ROWS,
      seedSeconds: round(seedSeconds),
      tableMbBefore: before,
      retentionDelete: {
        rowsDeleted: deleted,
        seconds: round(deleteSeconds, 2),
        rowsPerSecond: Math.round(deleted / deleteSeconds),
        walMb: round(deleteWal / 1e6),
        walBytesPerRow: Math.round(deleteWal / Math.max(deleted, 1)),
        tableMbAfter: afterDelete,
        vacuumSeconds: round(vacuumSeconds, 2),
        tableMbAfterVacuum: afterVacuum,
      },
      monthPartitions: {
        partitionsDropped: droppable.length,
        rowsDropped: droppedRows,
        ms: round(dropMs, 1),
        walKb: round(dropWal / 1e3),
      },
    };
    console.log(JSON.stringify(figures));
  } finally {
    await db.end();
    await database.drop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
