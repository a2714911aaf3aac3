/**
 * `npm run bench:ledger`: the ledger at size, against today's layout measured in the same run.
 *
 * A fresh database (the migrations as deployed). "Today" is the ledger before migration
 * 20261225030000_usage_ledger_partitions, rebuilt beside it as `LedgerToday`: one unpartitioned
 * table, text primary key, the five indexes, the three-rollup insert trigger of migration
 * 20261203091500 (read from that migration file) writing to today's rollup tables (schema
 * `bench_today`: today's indexes and page fill, so changes to the new layout's rollups do not speed
 * up today's figure), and a named prepared statement of 500 rows.
 *
 * - write: events/s of the worker's ledger INSERT (the statement a worker drains the outbox with),
 *   today's path (named statement, 500 a batch, into LedgerToday) vs the new one (LedgerService,
 *   unnamed statement, LEDGER_BATCH_SIZE rows a batch, partitioned ledger), same events, both
 *   measured after the 1M seed; and the WAL each wrote per event: pg_current_wal_lsn() before and
 *   after (the whole server's, other databases included) and this database's records alone, read
 *   with pg_waldump where the bench can run it.
 * - drain: events/s of one worker's outbox consumer, end to end: the same number of events from
 *   DRAIN_ORGS orgs put in the outbox first, then timed until the last is written. `today` is today's
 *   worker as it was when issue 24 was filed (daa4c21, bench/support/today-consumer.ts: one stream,
 *   one 500-event batch at a time, the zod decode, today's statement); `todayLean` what this bench
 *   called today before: today's batches and statement through the current consumer (the shard
 *   streams drained at once, the current decode); the new path is UsageLedgerConsumer as the worker
 *   runs it (LEDGER_BATCH_SIZE, LEDGER_BATCHES_IN_FLIGHT). Each baseline drains into its own copy of
 *   LedgerToday (the seed and the write measure's rows), so none pays for rows another added. And the CPU per event of Postgres'
 *   backends, the worker and Redis meanwhile (/proc). BENCH_DRAIN_REPS (3) rounds, one path right
 *   after the other; the medians, the median ratios, and each round's rates.
 * - bytes per row: the table with its indexes, over its rows (LedgerToday filled with the same
 *   first rows).
 * - upkeep and a month-end reconcile at BENCH_SMALL_ROWS (1M) and BENCH_LARGE_ROWS (10M), seeded
 *   set-based (INSERT ... SELECT FROM generate_series in 1M chunks with the triggers off, routed to
 *   the month partitions, then the rollups and running totals rebuilt from the ledger once): the
 *   rollup job (partitions ahead, stale rollup rebuilds) and the budget sums a reconcile runs
 *   (org, eight teams, five keys, this month and all time) via ledgerSpend; today's equivalents
 *   (recompute of a day from the ledger, SUM over the month's rows) on LedgerToday at 1M.
 * - retention: the oldest month dropped; every budget sum equal before and after.
 * The last line is one JSON object with every figure; a line `partial: {...}` has those of the
 * small size, before the large seed.
 */
import { spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { BaseConfig, WORKER_ENV_SCHEMA, WorkerConfig } from '@tollgate/config';
import { ledgerSpend, PrismaService, SpendWindow } from '@tollgate/db';
import {
  LedgerPartitionsService,
  LedgerService,
  UsageEvent,
  usageEntryFields,
  utcMonth,
  allUsageOutboxKeys,
  USAGE_LEDGER_WRITTEN_CHANNEL,
  UsageLedgerNotice,
  usageOutboxKeys,
  LedgerWriter,
  newCallId,
  parseUsageEntry,
  UsageLedgerConsumer,
} from '@tollgate/usage';
import { REDIS_SHARDS, RedisService, shardOf } from '@tollgate/redis';
import { UsageRollupService } from '@tollgate/reporting';
import { Client } from 'pg';
import { createBenchDatabase, ROOT } from './support/bench-platform';
import { rebuildRollups, withoutIndexes } from './support/ledger-rollups';
import { TodayDecode, TodayUsageConsumer, todayParseUsageEntry } from './support/today-consumer';

const KEYS = 1000;
const TEAMS = 8;
const MONTHS = 12;
const CHUNK = 1_000_000;
/**
 * Orgs of the drain measure (BENCH_DRAIN_ORGS): their events spread over the outbox's shard streams;
 * 1 puts every event in one stream.
 */
const DRAIN_ORGS = Number(process.env.BENCH_DRAIN_ORGS ?? 64);

const uuidOf = (kind: string, n: string) =>
  `overlay(overlay(md5($1 || '${kind}' || ${n}) placing '4' from 13) placing '8' from 17)::uuid`;

/**
 * `rows` ledger rows for org $1 over the last MONTHS months (skewed to recent), set-based: one
 * INSERT ... SELECT FROM generate_series per 1M rows with the ledger's triggers off (the session
 * replicates, as a restore would) and its indexes dropped (built again after, one sort each:
 * `withoutIndexes`), routed to the month partitions by Postgres. The rollups are then rebuilt from
 * the ledger in one pass (`rebuildRollups`), instead of the insert trigger adding every 1M-row
 * statement (what made 1M rows take minutes).
 */
async function seed(db: Client, table: string, orgId: string, rows: number, offset: number): Promise<void> {
  await withoutIndexes(db, table, () => fill(db, table, orgId, rows, offset));
}

async function fill(db: Client, table: string, orgId: string, rows: number, offset: number): Promise<void> {
  await db.query(`SET session_replication_role = replica`);
  try {
    for (let done = 0; done < rows; done += CHUNK) {
      const n = Math.min(CHUNK, rows - done);
      await db.query(
        `INSERT INTO "${table}" (id, "orgId", "teamId", "userId", "keyId", "upstreamId", "toolName", outcome, "costMicros", "inputTokens", "outputTokens", "latencyMs", "occurredAt")
         SELECT $1 || '-' || g, $1::uuid, ${uuidOf('team', `(k % ${TEAMS})`)}, ${uuidOf('user', `(k % 200)`)}, ${uuidOf('key', 'k')},
                ${uuidOf('up', `(t % 10)`)}, 'tool_' || t, (CASE WHEN r < 0.97 THEN 'OK' ELSE 'TOOL_ERROR' END)::"UsageOutcome",
                (t % 7 + 1) * 1000, 50, 100, 20 + (r * 900)::int,
                date_trunc('second', now() AT TIME ZONE 'UTC' - (${MONTHS * 30} * 86400 * (1 - sqrt(random()))) * interval '1 second')
         FROM (SELECT g, floor(${KEYS} * power(random(), 3))::int AS k, floor(300 * random())::int AS t, random() AS r
               FROM generate_series(${offset + done + 1}, ${offset + done + n}) g) s`,
        [orgId],
      );
    }
  } finally {
    await db.query(`RESET session_replication_role`);
  }
}

const loadNow = () => loadavg().map((l) => Math.round(l * 100) / 100);

async function time<T>(fn: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const t0 = performance.now();
  const value = await fn();
  return { ms: Math.round((performance.now() - t0) * 10) / 10, value };
}

/** Median of `reps` runs (after one warm-up). */
async function median(reps: number, fn: () => Promise<unknown>): Promise<number> {
  await fn();
  const ms: number[] = [];
  for (let i = 0; i < reps; i++) ms.push((await time(fn)).ms);
  ms.sort((a, b) => a - b);
  return ms[Math.floor(ms.length / 2)];
}

/** WAL written while `fn` ran: the server's, and this database's alone (see databaseWal). */
interface WalBytes {
  /** pg_current_wal_lsn() before and after: every database of the server (others' tests included). */
  server: number;
  /** Records of this database and the commits of their transactions, read with pg_waldump; null without it. */
  database: number | null;
}

async function measureWal(db: Client, fn: () => Promise<unknown>): Promise<WalBytes> {
  const lsn = async () => (await db.query(`SELECT pg_current_wal_lsn()::text AS l`)).rows[0].l as string;
  // A physical slot keeps the server from recycling the WAL of the range until pg_waldump has read it
  // (checkpoints of a busy server otherwise remove it within seconds).
  const slot = `bench_ledger_${randomBytes(4).toString('hex')}`;
  const reserved = await db
    .query(`SELECT pg_create_physical_replication_slot($1, true)`, [slot])
    .then(() => true)
    .catch(() => false);
  try {
    const from = await lsn();
    await fn();
    const to = await lsn();
    const server = Number((await db.query(`SELECT pg_wal_lsn_diff($1, $2)::bigint AS d`, [to, from])).rows[0].d);
    const database = await databaseWal(db, from, to).catch((err: Error) => {
      console.error(`WAL of this database not measured: ${err.message}`);
      return null;
    });
    return { server, database };
  } finally {
    if (reserved) await db.query(`SELECT pg_drop_replication_slot($1)`, [slot]);
  }
}

/**
 * This database's share of the WAL between two positions: the server's WAL is shared by every
 * database (on this machine, other test runs), so pg_waldump (beside the server's binaries, run with
 * read access to pg_wal) lists the records and those of this database's relations, plus their
 * transactions' commit records, are summed (record and full-page images).
 */
async function databaseWal(db: Client, from: string, to: string): Promise<number> {
  const info = (
    await db.query(
      `SELECT current_setting('data_directory') AS dir, (SELECT oid FROM pg_database WHERE datname = current_database())::text AS oid,
              current_setting('server_version_num')::int / 10000 AS major`,
    )
  ).rows[0] as { dir: string; oid: string; major: number };
  const waldump = process.env.BENCH_PG_WALDUMP ?? `/usr/lib/postgresql/${info.major}/bin/pg_waldump`;
  const child = spawn(waldump, ['-p', path.join(info.dir, 'pg_wal'), '-s', from, '-e', to], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const closed = new Promise<number | null>((resolve) => child.on('close', resolve));
  const failed = new Promise<never>((_, reject) => child.on('error', reject));
  const ours = new Set<string>();
  const noRelation = new Map<string, number>();
  let bytes = 0;
  const inDb = new RegExp(`rel \\d+/${info.oid}/`);
  const lines = (async () => {
    for await (const line of createInterface({ input: child.stdout })) {
      const m = /len \(rec\/tot\):\s*\d+\/\s*(\d+), tx:\s*(\d+)/.exec(line);
      if (!m) continue;
      const [, tot, tx] = m;
      if (inDb.test(line)) {
        bytes += Number(tot);
        if (tx !== '0') ours.add(tx);
      } else if (!line.includes(' rel ') && tx !== '0') noRelation.set(tx, (noRelation.get(tx) ?? 0) + Number(tot));
    }
  })();
  await Promise.race([lines, failed]);
  const code = await closed;
  if (code !== 0) throw new Error(`pg_waldump exited ${code}: ${stderr.trim()}`);
  for (const tx of ours) bytes += noRelation.get(tx) ?? 0;
  return bytes;
}

/** CPU time (ms, user + system) a process has used, from /proc; null where it cannot be read (another host). */
function processCpuMs(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // utime and stime, in clock ticks (100 a second on Linux).
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return null;
  }
}

/** CPU time (ms) of this database's client backends now, by pid. */
async function backendCpuMs(db: Client): Promise<Map<number, number>> {
  const { rows } = await db.query<{ pid: number }>(
    `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND backend_type = 'client backend'`,
  );
  const out = new Map<number, number>();
  for (const { pid } of rows) {
    const ms = processCpuMs(pid);
    if (ms !== null) out.set(pid, ms);
  }
  return out;
}

/** CPU per event of a drain, in microseconds: Postgres' backends, the worker (this process), Redis. */
interface DrainCpu {
  postgres: number | null;
  worker: number;
  redis: number | null;
}

/**
 * One worker's drain of the usage outbox, end to end: `events` put in their orgs' shard streams
 * (the fields an edge's completion script writes), then the worker's consumer started and timed
 * until every event is written (its `usage-ledger-written` notices), through `write`. Returns
 * events/s and the CPU each process spent per event meanwhile (read from /proc where Postgres and
 * Redis run on this host): on a machine shared with other work, wall time follows the load, the CPU
 * an event costs much less so.
 */
async function drainRate(
  db: Client,
  prefix: string,
  events: UsageEvent[],
  batchSize: number,
  batchesInFlight: number,
  write: (events: UsageEvent[]) => Promise<number>,
  consumerKind: 'current' | TodayDecode = 'current',
): Promise<{ perSecond: number; cpuUsPerEvent: DrainCpu }> {
  const url = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
  const config = {
    redis: { url, prefix, topology: { kind: 'standalone', url }, completionWait: { replicas: 0, timeoutMs: 1 } },
    worker: { ledgerBatchSize: batchSize, ledgerBatchesInFlight: batchesInFlight, ledgerClaimIdleMs: 60_000 },
  } as WorkerConfig;
  const redis = new RedisService(config);
  const keys = allUsageOutboxKeys(prefix, REDIS_SHARDS).flatMap((k) => [k.events, k.dead]);
  try {
    for (let i = 0; i < events.length; i += 5000) {
      const pipe = redis.client.pipeline();
      for (const e of events.slice(i, i + 5000))
        pipe.xadd(
          usageOutboxKeys(prefix, consumerKind === 'current' ? shardOf(e.orgId) : undefined).events,
          '*',
          ...usageEntryFields(e),
        );
      await pipe.exec();
    }
    let written = 0;
    let allWritten!: () => void;
    const done = new Promise<void>((resolve) => (allWritten = resolve));
    await redis.subscribe(USAGE_LEDGER_WRITTEN_CHANNEL, (message) => {
      written += (JSON.parse(message) as UsageLedgerNotice).written.length;
      if (written >= events.length) allWritten();
    });
    // The worker's own consumer; only the write (the ledger statement, without the alert-check request) is the bench's.
    const writer: Pick<LedgerWriter, 'write' | 'writeRefusals' | 'writeTrail'> = {
      write,
      writeRefusals: async () => 0,
      writeTrail: async () => 0,
    };
    // Today's worker (daa4c21) drained one stream, the edges writing no shards: its consumer as it was.
    const consumer =
      consumerKind === 'current'
        ? new UsageLedgerConsumer(redis, writer as LedgerWriter, config)
        : new TodayUsageConsumer(redis, usageOutboxKeys(prefix), batchSize, write, consumerKind);
    const start = () =>
      consumer instanceof UsageLedgerConsumer ? consumer.onApplicationBootstrap() : consumer.start();
    const stop = () => (consumer instanceof UsageLedgerConsumer ? consumer.onModuleDestroy() : consumer.stop());
    const redisPid = Number(/process_id:(\d+)/.exec(await redis.client.info('server'))?.[1]);
    const pg0 = await backendCpuMs(db);
    const redis0 = processCpuMs(redisPid);
    const worker0 = process.cpuUsage();
    const t0 = performance.now();
    await start();
    await done;
    const ms = performance.now() - t0;
    const worker = process.cpuUsage(worker0);
    const redis1 = processCpuMs(redisPid);
    const pg1 = await backendCpuMs(db);
    await stop();
    // A backend the pool opened during the drain counts from 0; one it closed is not counted.
    let pgMs = 0;
    for (const [pid, cpu] of pg1) pgMs += cpu - (pg0.get(pid) ?? 0);
    const perEvent = (msTotal: number) => Math.round((msTotal * 1000) / events.length);
    return {
      perSecond: Math.round(events.length / (ms / 1000)),
      cpuUsPerEvent: {
        postgres: pg1.size > 0 ? perEvent(pgMs) : null,
        worker: perEvent((worker.user + worker.system) / 1000),
        redis: redis0 !== null && redis1 !== null ? perEvent(redis1 - redis0) : null,
      },
    };
  } finally {
    await redis.client.del(...keys);
    await redis.onApplicationShutdown();
  }
}

async function bytesPerRow(db: Client, tables: string[], rows: number): Promise<number> {
  const r = await db.query(
    `SELECT sum(pg_total_relation_size(c.oid))::bigint AS b FROM pg_class c WHERE c.relname = ANY($1::text[])`,
    [tables],
  );
  return Math.round(Number(r.rows[0].b) / rows);
}

async function main(): Promise<void> {
  const small = Number(process.env.BENCH_SMALL_ROWS ?? 1_000_000);
  const large = Number(process.env.BENCH_LARGE_ROWS ?? 10_000_000);
  const writeEvents = Number(process.env.BENCH_WRITE_EVENTS ?? 100_000);
  // The worker's own default unless LEDGER_BATCH_SIZE says otherwise.
  const batch = WORKER_ENV_SCHEMA.shape.LEDGER_BATCH_SIZE.parse(process.env.LEDGER_BATCH_SIZE);
  const inFlight = WORKER_ENV_SCHEMA.shape.LEDGER_BATCHES_IN_FLIGHT.parse(process.env.LEDGER_BATCHES_IN_FLIGHT);
  const loadBefore = loadNow();

  const database = await createBenchDatabase('bench_ledger');
  const db = new Client({ connectionString: database.url });
  await db.connect();
  const prisma = new PrismaService({ db: { url: database.url, poolSize: 4, readUrl: undefined } } as BaseConfig);
  const ledger = new LedgerService(prisma);
  const partitions = new LedgerPartitionsService(prisma);
  const rollups = new UsageRollupService(prisma);
  const out: Record<string, unknown> = { small, large, writeEvents, batch, batchesInFlight: inFlight };
  try {
    // Today's ledger, beside the new one: same columns, today's key, indexes and trigger.
    const todayTrigger = readFileSync(
      path.join(ROOT, 'prisma/migrations/20261203091500_usage_call_day_rollup/migration.sql'),
      'utf8',
    );
    const fnStart = todayTrigger.indexOf('CREATE OR REPLACE FUNCTION tollgate_usage_rollups_on_insert()');
    const fnSql = todayTrigger
      .slice(fnStart, todayTrigger.indexOf("END ';", fnStart) + "END ';".length)
      .replace('tollgate_usage_rollups_on_insert', 'bench_today_rollups_on_insert');
    await db.query(fnSql);
    // Its rollups are today's too, in a schema of their own (the function resolves its tables there,
    // "Organization" in public): today's indexes, no room left on their pages.
    await db.query(`CREATE SCHEMA bench_today`);
    for (const t of ['UsageKeyDayRollup', 'UsageToolDayRollup', 'UsageCallDayRollup', 'UsageRollupCoverage'])
      await db.query(`CREATE TABLE bench_today."${t}" (LIKE public."${t}" INCLUDING DEFAULTS)`);
    await db.query(
      `ALTER TABLE bench_today."UsageKeyDayRollup" ADD PRIMARY KEY ("orgId", "day", "keyId", "teamId", "userId")`,
    );
    await db.query(
      `ALTER TABLE bench_today."UsageToolDayRollup" ADD PRIMARY KEY ("orgId", "day", "upstreamId", "toolName")`,
    );
    await db.query(
      `ALTER TABLE bench_today."UsageCallDayRollup" ADD PRIMARY KEY ("orgId", "day", "keyId", "teamId", "userId", "upstreamId", "toolName")`,
    );
    await db.query(`CREATE INDEX ON bench_today."UsageCallDayRollup" ("orgId", "teamId", "day")`);
    await db.query(`CREATE INDEX ON bench_today."UsageCallDayRollup" ("orgId", "userId", "day")`);
    await db.query(`ALTER TABLE bench_today."UsageRollupCoverage" ADD PRIMARY KEY ("orgId")`);
    await db.query(`ALTER FUNCTION bench_today_rollups_on_insert() SET search_path = bench_today, public`);
    await db.query(`CREATE TABLE "LedgerToday" (LIKE "UsageEvent" INCLUDING DEFAULTS)`);
    // Today's text keys compare with the database's collation (LIKE copies the ledger's "C").
    await db.query(
      `ALTER TABLE "LedgerToday" ALTER COLUMN "id" TYPE text COLLATE "default", ALTER COLUMN "toolName" TYPE text COLLATE "default"`,
    );
    await db.query(`ALTER TABLE "LedgerToday" ADD PRIMARY KEY ("id")`);
    await db.query(`CREATE INDEX ON "LedgerToday" ("orgId", "occurredAt") INCLUDE ("costMicros")`);
    await db.query(`CREATE INDEX ON "LedgerToday" ("keyId", "occurredAt")`);
    await db.query(`CREATE INDEX ON "LedgerToday" ("orgId", "teamId", "occurredAt") INCLUDE ("costMicros")`);
    await db.query(`CREATE INDEX ON "LedgerToday" ("orgId", "userId", "occurredAt") INCLUDE ("costMicros")`);
    await db.query(
      `CREATE TRIGGER bench_today AFTER INSERT ON "LedgerToday" REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION bench_today_rollups_on_insert()`,
    );
    const now = new Date();
    for (let m = MONTHS + 1; m > 0; m--) await partitions.ensureAhead(new Date(`${utcMonth(now, -m)}T00:00:00Z`), 0);
    await partitions.ensureAhead(now, 3);

    const orgId = randomUUID();
    const todayOrg = randomUUID();
    await db.query(
      `INSERT INTO "Organization" (id, name, slug, "updatedAt") VALUES ($1, 'bench', $2, now()), ($3, 'today', $4, now())`,
      [orgId, `bench-${orgId}`, todayOrg, `today-${todayOrg}`],
    );
    const seeded1 = await time(() => seed(db, 'UsageEvent', orgId, small, 0));
    const rebuilt1 = await time(() => rebuildRollups(db, orgId));
    // LedgerToday's rows are read directly by today's measures; its rollups are not used.
    const seededToday = await time(() => seed(db, 'LedgerToday', todayOrg, small, 0));
    await db.query('VACUUM ANALYZE "UsageEvent", "LedgerToday", "UsageKeyDayRollup"');
    out.seedSeconds = { ledger1M: seeded1.ms / 1000, rollups1M: rebuilt1.ms / 1000, today1M: seededToday.ms / 1000 };
    const partNames = (
      await db.query(
        `SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = '"UsageEvent"'::regclass`,
      )
    ).rows.map((r) => r.relname as string);
    out.bytesPerRow = {
      today: await bytesPerRow(db, ['LedgerToday'], small),
      partitioned: await bytesPerRow(db, partNames, small),
    };

    // Write rate, same events for both paths.
    const key = (i: number) => ({
      keyId: randomUUID(),
      teamId: randomUUID(),
      userId: randomUUID(),
      n: i,
    });
    const keys = Array.from({ length: 200 }, (_, i) => key(i));
    // Ids as each path's edge made them: today's random (version 4), the new path's of version 7
    // (newCallId), made one after the other through the run, ten a millisecond (10,000 calls a second).
    const todayId = () => randomUUID();
    let idsMade = 0;
    const newId = () => newCallId(now.getTime() + Math.floor(idsMade++ / 10));
    const makeEvents = (org: string, id: () => string): UsageEvent[] =>
      Array.from({ length: writeEvents }, (_, i) => {
        const k = keys[i % keys.length];
        return {
          id: id(),
          orgId: org,
          teamId: k.teamId,
          userId: k.userId,
          keyId: k.keyId,
          upstreamId: '00000000-0000-4000-8000-000000000001',
          toolName: `tool_${i % 50}`,
          outcome: 'OK',
          costMicros: 1000n + BigInt(i % 7),
          inputTokens: 0,
          outputTokens: 10,
          latencyMs: 20,
          priceRuleId: null,
          occurredAt: new Date(now.getTime() - (i % 3600) * 1000),
        };
      });
    const todayInsert = readTodayInsert('LedgerToday');
    const todayEvents = makeEvents(todayOrg, todayId);
    let todayWal: WalBytes | null = null;
    const todayWrite = await time(async () => {
      todayWal = await measureWal(db, async () => {
        const client = await prisma.pool.connect();
        try {
          for (let i = 0; i < todayEvents.length; i += 500) {
            const b = todayEvents.slice(i, i + 500);
            await client.query({ name: 'bench-today-insert', text: todayInsert, values: columns(b) });
          }
        } finally {
          client.release();
        }
      });
    });
    const newEvents = makeEvents(orgId, newId);
    let newWal: WalBytes | null = null;
    const newWrite = await time(async () => {
      newWal = await measureWal(db, async () => {
        for (let i = 0; i < newEvents.length; i += batch) await ledger.writeUsageEvents(newEvents.slice(i, i + batch));
      });
    });
    const rate = (ms: number) => Math.round(writeEvents / (ms / 1000));
    out.writeEventsPerSecond = {
      today: rate(todayWrite.ms),
      partitioned: rate(newWrite.ms),
      ratio: Math.round((todayWrite.ms / newWrite.ms) * 100) / 100,
    };
    // WAL per event written (rows, index entries, the trigger's rollups and totals, commits).
    const perEvent = (w: WalBytes | null) =>
      w && { server: Math.round(w.server / writeEvents), database: w.database && Math.round(w.database / writeEvents) };
    out.walBytesPerEvent = { today: perEvent(todayWal), partitioned: perEvent(newWal) };

    // Drain through Redis: the same number of events from DRAIN_ORGS orgs (spread over the shards'
    // streams), today's write (named statement, 500 a batch, LedgerToday) vs the new one.
    const drainOrgs = async (name: string) => {
      const ids = Array.from({ length: DRAIN_ORGS }, () => randomUUID());
      for (const id of ids)
        await db.query(`INSERT INTO "Organization" (id, name, slug, "updatedAt") VALUES ($1, $2, $3, now())`, [
          id,
          name,
          `${name}-${id}`,
        ]);
      return ids;
    };
    const spread = (orgs: string[], id: () => string) =>
      makeEvents(orgs[0], id).map((e, i) => ({ ...e, orgId: orgs[i % orgs.length] }));
    type DrainPath = 'today' | 'todayLean' | 'todayOneStreamLean' | 'partitioned';
    // Each baseline drains into a table of its own, a copy of LedgerToday as it is now (the seed and
    // the write measure's rows): today's text key costs more as its table grows, so drains sharing one
    // table would each pay for the rows the others added.
    const todayTables: Record<Exclude<DrainPath, 'partitioned'>, string> = {
      today: 'LedgerToday',
      todayLean: 'LedgerTodayLean',
      todayOneStreamLean: 'LedgerTodayOneStreamLean',
    };
    const paths: DrainPath[] = ['today', 'todayLean', 'partitioned'];
    if (process.env.BENCH_TODAY_ONE_STREAM_LEAN === '1') paths.splice(2, 0, 'todayOneStreamLean');
    for (const p of paths) {
      if (p === 'today' || p === 'partitioned') continue;
      const table = todayTables[p];
      await db.query(`CREATE TABLE "${table}" (LIKE "LedgerToday" INCLUDING ALL)`);
      await withoutIndexes(db, table, async () => {
        await db.query(`INSERT INTO "${table}" SELECT * FROM "LedgerToday"`);
      });
      await db.query(
        `CREATE TRIGGER bench_today AFTER INSERT ON "${table}" REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION bench_today_rollups_on_insert()`,
      );
      await db.query(`VACUUM ANALYZE "${table}"`);
    }
    const todayOrgs = await drainOrgs('drain-today');
    const newOrgs = await drainOrgs('drain-new');
    const drainPrefix = `tgbench-ledger-${randomBytes(4).toString('hex')}`;
    // Today's statement, 500 events a batch, into a baseline's table.
    const todayWriteBatch = (table: string) => async (b: UsageEvent[]) => {
      let n = 0;
      for (let i = 0; i < b.length; i += 500) {
        const r = await prisma.pool.query({
          name: `bench-today-insert-${table}`,
          text: readTodayInsert(table),
          values: columns(b.slice(i, i + 500)),
        });
        n += r.rowCount ?? 0;
      }
      return n;
    };
    // Each path's drain. `today` is today's worker as it was (TodayUsageConsumer: one stream, one batch
    // at a time, the zod decode); `todayLean` is the figure this bench gave before: today's batches and
    // statement through the current consumer (the shard streams drained at once, the current decode);
    // `todayOneStreamLean` (BENCH_TODAY_ONE_STREAM_LEAN=1) today's consumer with the current decode,
    // which tells the decode's share from the consumer's.
    const drains: Record<DrainPath, (rep: number) => ReturnType<typeof drainRate>> = {
      today: (rep: number) =>
        drainRate(
          db,
          `${drainPrefix}-today-${rep}`,
          spread(todayOrgs, todayId),
          500,
          1,
          todayWriteBatch(todayTables.today),
          todayParseUsageEntry,
        ),
      todayLean: (rep: number) =>
        drainRate(
          db,
          `${drainPrefix}-today-lean-${rep}`,
          spread(todayOrgs, todayId),
          500,
          1,
          todayWriteBatch(todayTables.todayLean),
        ),
      todayOneStreamLean: (rep: number) =>
        drainRate(
          db,
          `${drainPrefix}-today-one-lean-${rep}`,
          spread(todayOrgs, todayId),
          500,
          1,
          todayWriteBatch(todayTables.todayOneStreamLean),
          parseUsageEntry,
        ),
      partitioned: (rep: number) =>
        drainRate(db, `${drainPrefix}-new-${rep}`, spread(newOrgs, newId), batch, inFlight, (b) =>
          ledger.writeUsageEvents(b),
        ),
    };
    // Rounds of drains, one path right after the other (the order rotating): on a shared machine the
    // load moves within seconds, so each round's ratios compare drains under about the same load, and
    // the medians say more than one round does.
    const drainReps = Number(process.env.BENCH_DRAIN_REPS ?? 3);
    const rounds: Partial<Record<DrainPath, Awaited<ReturnType<typeof drainRate>>>>[] = [];
    for (let rep = 0; rep < drainReps; rep++) {
      const round: (typeof rounds)[number] = {};
      const order = rep % 2 === 0 ? paths : [...paths].reverse();
      for (const p of order) round[p] = await drains[p](rep);
      rounds.push(round);
    }
    const mid = (values: number[]) => {
      const sorted = [...values].sort((a, b) => a - b);
      const m = sorted.length >> 1;
      return sorted.length % 2 ? sorted[m] : (sorted[m - 1] + sorted[m]) / 2;
    };
    const round2 = (n: number) => Math.round(n * 100) / 100;
    const baselines = paths.filter((p) => p !== 'partitioned');
    out.drainEventsPerSecond = {
      ...Object.fromEntries(paths.map((p) => [p, Math.round(mid(rounds.map((r) => r[p]!.perSecond)))])),
      // The new path's rate over each baseline's, the median of the rounds' ratios.
      ratio: Object.fromEntries(
        baselines.map((p) => [p, round2(mid(rounds.map((r) => r.partitioned!.perSecond / r[p]!.perSecond)))]),
      ),
      rounds: rounds.map((r) => Object.fromEntries(paths.map((p) => [p, r[p]!.perSecond]))),
      orgs: DRAIN_ORGS,
    };
    // What an event of the drain costs each process (the worker's figure includes this bench's notice
    // listener), the median of the rounds; the ratio is a baseline's total over the new one's, as the
    // rate's is new over the baseline.
    const cpuTotal = (c: DrainCpu) => (c.postgres ?? 0) + c.worker + (c.redis ?? 0);
    const cpuMid = (path: DrainPath): DrainCpu => {
      const of = (f: (c: DrainCpu) => number | null) => {
        const known = rounds.map((r) => f(r[path]!.cpuUsPerEvent)).filter((v): v is number => v !== null);
        return known.length > 0 ? Math.round(mid(known)) : null;
      };
      return { postgres: of((c) => c.postgres), worker: of((c) => c.worker)!, redis: of((c) => c.redis) };
    };
    out.drainCpuUsPerEvent = {
      ...Object.fromEntries(paths.map((p) => [p, cpuMid(p)])),
      ratio: Object.fromEntries(
        baselines.map((p) => [
          p,
          round2(mid(rounds.map((r) => cpuTotal(r[p]!.cpuUsPerEvent) / cpuTotal(r.partitioned!.cpuUsPerEvent)))),
        ]),
      ),
    };

    // Budget windows a reconcile of this org reads: org, teams, five keys; this month and all time.
    const teams = (
      await db.query(
        `SELECT "teamId" FROM "UsageKeyDayRollup" WHERE "orgId" = $1 GROUP BY 1 ORDER BY sum(calls) DESC LIMIT ${TEAMS}`,
        [orgId],
      )
    ).rows;
    const hotKeys = (
      await db.query(
        `SELECT "keyId" FROM "UsageKeyDayRollup" WHERE "orgId" = $1 GROUP BY 1 ORDER BY sum(calls) DESC LIMIT 5`,
        [orgId],
      )
    ).rows;
    const monthStart = new Date(`${utcMonth(now)}T00:00:00Z`);
    const monthEnd = new Date(`${utcMonth(now, 1)}T00:00:00Z`);
    const windows: SpendWindow[] = [];
    for (const p of [
      { start: monthStart, end: monthEnd },
      { start: new Date(0), end: null },
    ]) {
      windows.push({ orgId, scope: 'ORG', scopeId: orgId, ...p });
      for (const t of teams) windows.push({ orgId, scope: 'TEAM', scopeId: t.teamId, ...p });
      for (const k of hotKeys) windows.push({ orgId, scope: 'KEY', scopeId: k.keyId, ...p });
    }
    const reconcileSums = () => Promise.all(windows.map((w) => ledgerSpend(prisma, w).then((r) => r.micros)));
    const rollupJob = async () => {
      await partitions.ensureAhead(new Date(), 3);
      await rollups.rebuildStaleReportRollups(null);
    };
    const reps = Number(process.env.BENCH_REPS ?? 7);
    const at1M = { rollupJobMs: await median(reps, rollupJob), reconcileMs: await median(reps, reconcileSums) };
    // Today's: the job's day recompute from the ledger, and the month's SUMs over ledger rows.
    const todayDay = now.toISOString().slice(0, 10);
    const todayRollup = await median(3, () =>
      db.query(
        `SELECT e."orgId", e."keyId", e."upstreamId", e."toolName", count(*), sum(e."costMicros"), sum(e."latencyMs")
         FROM "LedgerToday" e WHERE e."occurredAt" >= $1::timestamp AND e."occurredAt" < $1::timestamp + interval '1 day'
         GROUP BY 1, 2, 3, 4`,
        [todayDay],
      ),
    );
    const todayReconcile = await median(3, async () => {
      for (const w of windows) {
        const col = { ORG: 'orgId', TEAM: 'teamId', USER: 'userId', KEY: 'keyId' }[w.scope];
        await db.query(
          `SELECT sum("costMicros") FROM "LedgerToday" WHERE "orgId" = $1 AND "${col}" = $2 AND "occurredAt" >= $3 AND ($4::timestamp IS NULL OR "occurredAt" < $4)`,
          [todayOrg, w.scope === 'ORG' ? todayOrg : w.scopeId, w.start, w.end],
        );
      }
    });
    out.at1M = { ...at1M, today: { rollupJobMs: todayRollup, reconcileMs: todayReconcile } };
    // The figures so far, in case the large seed does not finish (it takes most of an hour at load 20).
    console.log(`partial: ${JSON.stringify({ ...out, loadAverage: { before: loadBefore, now: loadNow() } })}`);

    // To the large size (new ledger only).
    if (large > small) {
      const seeded = await time(() => seed(db, 'UsageEvent', orgId, large - small, small));
      const rebuilt = await time(() => rebuildRollups(db, orgId));
      await db.query('VACUUM ANALYZE "UsageEvent", "UsageKeyDayRollup"');
      out.seedSeconds = { ...(out.seedSeconds as object), toLarge: seeded.ms / 1000, rollupsLarge: rebuilt.ms / 1000 };
      const atLarge = { rollupJobMs: await median(reps, rollupJob), reconcileMs: await median(reps, reconcileSums) };
      out.atLarge = {
        ...atLarge,
        ratioToSmall: {
          rollupJob: Math.round((atLarge.rollupJobMs / at1M.rollupJobMs) * 100) / 100,
          reconcile: Math.round((atLarge.reconcileMs / at1M.reconcileMs) * 100) / 100,
        },
      };
      out.bytesPerRowLarge = await bytesPerRow(db, partNames, large + writeEvents);
    }

    // Retention: the oldest month with rows goes; every sum stays.
    const sumsBefore = await reconcileSums();
    let dropped = { ms: 0, value: { month: '', rows: 0n } as { month: string; rows: bigint } };
    for (const month of await partitions.months()) {
      dropped = await time(() => partitions.dropMonth(month));
      if (dropped.value.rows > 0n) break;
    }
    const sumsAfter = await reconcileSums();
    out.retention = {
      month: dropped.value.month,
      rows: dropped.value.rows.toString(),
      ms: dropped.ms,
      budgetsEqual: sumsAfter.every((s, i) => s === sumsBefore[i]),
      budgets: windows.length,
    };
  } finally {
    await prisma.onApplicationShutdown();
    await db.end();
    if (!process.env.BENCH_KEEP_DB) await database.drop();
  }
  out.loadAverage = { before: loadBefore, after: loadNow() };
  console.log(JSON.stringify(out));
}

/** Today's INSERT (before the partitioned ledger), into LedgerToday or a baseline's copy of it. */
function readTodayInsert(table: string): string {
  return `
  INSERT INTO "${table}" ("id", "orgId", "teamId", "userId", "keyId", "upstreamId", "toolName", "outcome", "costMicros", "inputTokens", "outputTokens", "latencyMs", "priceRuleId", "occurredAt")
  SELECT * FROM unnest(
    $1::text[], $2::uuid[], $3::uuid[], $4::uuid[], $5::uuid[], $6::uuid[], $7::text[], $8::"UsageOutcome"[], $9::bigint[],
    $10::int[], $11::int[], $12::int[], $13::uuid[], $14::timestamp(3)[]
  )
  ON CONFLICT ("id") DO NOTHING`;
}

/**
 * Today's layout has every column of the ledger's insert but the last (the trace id), and today's
 * worker passed them as arrays for the driver to convert element by element.
 */
function columns(events: UsageEvent[]): unknown[] {
  return [
    events.map((e) => e.id),
    events.map((e) => e.orgId),
    events.map((e) => e.teamId),
    events.map((e) => e.userId),
    events.map((e) => e.keyId),
    events.map((e) => e.upstreamId),
    events.map((e) => e.toolName),
    events.map((e) => e.outcome),
    events.map((e) => e.costMicros.toString()),
    events.map((e) => e.inputTokens),
    events.map((e) => e.outputTokens),
    events.map((e) => e.latencyMs),
    events.map((e) => e.priceRuleId),
    events.map((e) => e.occurredAt.toISOString()),
  ];
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
