import { randomUUID } from 'node:crypto';
import { ConsoleLogger, INestApplication } from '@nestjs/common';
import { loadWorkerConfig } from '@tollgate/config';
import { PrismaService } from '@tollgate/db';
import {
  sampleUsageEvent,
  toPayload,
  TRAIL_ENTRY_FIELD,
  UsageEvent,
  usageEntryFields,
  USAGE_ENTRY_FIELD,
  USAGE_LEDGER_GROUP,
  usageOutboxKeys,
  UsageOutboxKeys,
  UsageLedgerConsumer,
} from '@tollgate/usage';
import { shardOf } from '@tollgate/redis';
import { appendToUsageOutbox, createTestEnv, TestEnv, waitForUsageEvents } from '@tollgate/testing';
import { Redis } from 'ioredis';
import request from 'supertest';
import { Client } from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createWorkerApp } from '../worker-app';

/** The worker's log, so a test can await a line the worker writes instead of sleeping. */
class WatchedLogger extends ConsoleLogger {
  private readonly watchers = new Set<(message: string) => void>();

  /** Resolves with the next error line matching `pattern`. */
  nextError(pattern: RegExp): Promise<string> {
    return new Promise((resolve) => {
      const watcher = (message: string) => {
        if (!pattern.test(message)) return;
        this.watchers.delete(watcher);
        resolve(message);
      };
      this.watchers.add(watcher);
    });
  }

  override error(message: unknown, ...rest: unknown[]): void {
    for (const w of [...this.watchers]) w(String(message));
    super.error(message, ...rest);
  }
}

/** A usage event of `orgId` with ids of its own (nothing it names needs to exist). */
function usageEventOf(orgId: string): UsageEvent {
  return sampleUsageEvent({
    id: randomUUID(),
    orgId,
    teamId: randomUUID(),
    userId: randomUUID(),
    keyId: randomUUID(),
    upstreamId: randomUUID(),
    costMicros: 250_000n,
    priceRuleId: null,
    occurredAt: new Date(),
    traceparent: undefined,
  });
}

describe('usage ledger consumer: outbox stream to ledger, on real Redis and Postgres', () => {
  let env: TestEnv;
  let worker: INestApplication;
  let prisma: PrismaService;
  let redis: Redis;
  let keys: UsageOutboxKeys;
  const log = new WatchedLogger();
  const orgId = randomUUID();

  const usageEvent = () => usageEventOf(orgId);

  async function startWorker(): Promise<INestApplication> {
    const app = await createWorkerApp(loadWorkerConfig(env.vars));
    app.useLogger(log);
    return app.init();
  }

  async function ledgerCount(ids: string[]): Promise<number> {
    return prisma.usageEvent.count({ where: { id: { in: ids } } });
  }

  /** Entries in the outbox, and how many of them a consumer has read but not acknowledged. */
  async function outbox(): Promise<{ length: number; pending: number }> {
    const [length, [pending]] = await Promise.all([
      redis.xlen(keys.events),
      redis.xpending(keys.events, USAGE_LEDGER_GROUP) as Promise<[number]>,
    ]);
    return { length, pending: Number(pending) };
  }

  async function consumerNames(): Promise<string[]> {
    const consumers = (await redis.call('XINFO', 'CONSUMERS', keys.events, USAGE_LEDGER_GROUP)) as string[][];
    return consumers.map((c) => c[c.indexOf('name') + 1]);
  }

  beforeAll(async () => {
    // Entries left unacknowledged for 300 ms are taken over (60 s in production).
    env = await createTestEnv({ LEDGER_CLAIM_IDLE_MS: '300' });
    worker = await startWorker();
    prisma = worker.get(PrismaService);
    redis = new Redis(env.redisUrl);
    keys = usageOutboxKeys(env.redisPrefix, shardOf(orgId));
  });

  afterAll(async () => {
    await redis?.quit();
    await worker?.close();
    await env?.cleanup();
  });

  it('should write every concurrently recorded event to the ledger exactly once and leave the outbox empty', async () => {
    const events = Array.from({ length: 400 }, usageEvent);
    await appendToUsageOutbox(redis, env.redisPrefix, events);
    const ids = events.map((e) => e.id);
    await waitForUsageEvents(env.redisUrl, env.redisPrefix, ids);

    const rows = await prisma.usageEvent.findMany({ where: { id: { in: ids } } });
    expect(rows.map((r) => r.id).sort()).toEqual([...ids].sort());
    expect(
      rows.every((r) => r.orgId === orgId && r.costMicros === 250_000n && r.outcome === 'OK' && r.outputTokens === 12),
    ).toBe(true);
    expect(await outbox()).toEqual({ length: 0, pending: 0 });
  });

  it("should keep the call's trace id on its ledger row, and none for an event recorded without a trace context", async () => {
    const traced = { ...usageEvent(), traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' };
    const untraced = usageEvent();
    await appendToUsageOutbox(redis, env.redisPrefix, [traced, untraced]);
    await waitForUsageEvents(env.redisUrl, env.redisPrefix, [traced.id, untraced.id]);

    const rows = await prisma.usageEvent.findMany({ where: { id: { in: [traced.id, untraced.id] } } });
    expect(Object.fromEntries(rows.map((r) => [r.id, r.traceId]))).toEqual({
      [traced.id]: '4bf92f3577b34da6a3ce929d0e0e4736',
      [untraced.id]: null,
    });
  });

  it('should write one ledger row when the same event is recorded again, at once or after it was written', async () => {
    const e = usageEvent();
    await appendToUsageOutbox(redis, env.redisPrefix, [e, e]);
    await waitForUsageEvents(env.redisUrl, env.redisPrefix, [e.id]);
    const first = await prisma.usageEvent.findFirstOrThrow({ where: { id: e.id } });

    await appendToUsageOutbox(redis, env.redisPrefix, [{ ...e, costMicros: 999n }]);
    await waitForUsageEvents(env.redisUrl, env.redisPrefix, [e.id]);

    expect(await prisma.usageEvent.findMany({ where: { id: e.id } })).toEqual([first]);
    expect(await outbox()).toEqual({ length: 0, pending: 0 });
  });

  it('should dead-letter invalid entries with the reason (counted in the metrics) and write the valid ones of the same read', async () => {
    const [good1, good2] = [usageEvent(), usageEvent()];
    const badCost = { ...toPayload(usageEvent()), costMicros: 'a lot' };
    // One transaction: the consumer, blocked on its read, gets all five entries in one batch.
    const added = (await redis
      .multi()
      .xadd(keys.events, '*', ...usageEntryFields(good1))
      .xadd(keys.events, '*', USAGE_ENTRY_FIELD, JSON.stringify(badCost))
      .xadd(keys.events, '*', USAGE_ENTRY_FIELD, '{not json')
      .xadd(keys.events, '*', 'other', 'field')
      .xadd(keys.events, '*', ...usageEntryFields(good2))
      .exec())!.map(([, id]) => id as string);

    await waitForUsageEvents(env.redisUrl, env.redisPrefix, [good1.id, good2.id]);
    expect(await ledgerCount([good1.id, good2.id, badCost.id])).toBe(2);

    const dead = (await redis.xrange(keys.dead, '-', '+')).map(([, fields]) =>
      Object.fromEntries(Array.from({ length: fields.length / 2 }, (_, i) => [fields[2 * i], fields[2 * i + 1]])),
    );
    expect(dead.map((d) => d.entry)).toEqual(added.slice(1, 4));
    expect(dead[0].reason).toBe('costMicros must be an integer number of micro-units');
    expect(JSON.parse(dead[0][USAGE_ENTRY_FIELD])).toEqual(badCost);
    expect(dead[1].reason).toMatch(/^the "e" field is not JSON/);
    expect(dead[1][USAGE_ENTRY_FIELD]).toBe('{not json');
    expect(dead[2].reason).toBe('the entry has no "e" field');
    expect(await outbox()).toEqual({ length: 0, pending: 0 });
    await expect(waitForUsageEvents(env.redisUrl, env.redisPrefix, [badCost.id])).rejects.toThrow(
      `usage events dead-lettered, never written: ${badCost.id}`,
    );

    const metrics = await request(worker.getHttpServer())
      .get('/metrics')
      .set('Authorization', `Bearer ${env.vars.METRICS_TOKEN}`)
      .expect(200);
    expect(metrics.text).toContain('tollgate_usage_outbox_entries{state="waiting"} 0');
    expect(metrics.text).toContain('tollgate_usage_outbox_entries{state="pending"} 0');
    expect(metrics.text).toContain('tollgate_usage_outbox_entries{state="dead_lettered"} 3');
  });

  it('should dead-letter an entry Postgres refuses, write the rest of its batch, and keep a lone surrogate as U+FFFD', async () => {
    const [good1, good2] = [usageEvent(), usageEvent()];
    // Year 0 passes the event's schema (an ISO date-time) but not Postgres' timestamp: retrying
    // its batch would fail for ever and hold back the stream behind it.
    const yearZero = { ...usageEvent(), occurredAt: new Date('0000-06-01T00:00:00.000Z') };
    // A step written as an edge without jsonbText would write it: jsonb refuses the `\ud800` escape.
    const step = {
      id: `${Date.now()}-lone-surrogate`,
      orgId,
      teamId: good1.teamId,
      userId: good1.userId,
      keyId: good1.keyId,
      sessionId: null,
      kind: 'CALL',
      name: 'fx__\ud800',
      catalogVersion: null,
      tokens: 0,
      ok: false,
      code: 'UNKNOWN_TOOL',
      callId: null,
      costMicros: null,
      detail: { ['arg\udc00']: 'x\ud800y' },
      content: null,
      occurredAt: new Date().toISOString(),
    };
    const added = (await redis
      .multi()
      .xadd(keys.events, '*', ...usageEntryFields(good1))
      .xadd(keys.events, '*', ...usageEntryFields(yearZero))
      .xadd(keys.events, '*', TRAIL_ENTRY_FIELD, JSON.stringify([step]))
      .xadd(keys.events, '*', ...usageEntryFields(good2))
      .exec())!.map(([, id]) => id as string);
    const deadBefore = await redis.xlen(keys.dead);

    await waitForUsageEvents(env.redisUrl, env.redisPrefix, [good1.id, good2.id]);
    expect(await ledgerCount([good1.id, good2.id, yearZero.id])).toBe(2);
    const [trail] = await prisma.$queryRawUnsafe<{ name: string; detail: unknown }[]>(
      'SELECT name, detail FROM "TrailEvent" WHERE id = $1',
      step.id,
    );
    expect(trail).toEqual({ name: 'fx__\ufffd', detail: { ['arg\ufffd']: 'x\ufffdy' } });

    const dead = (await redis.xrange(keys.dead, '-', '+')).slice(deadBefore).map(([, fields]) => fields);
    expect(dead).toHaveLength(1);
    expect(dead[0].slice(0, 4)).toEqual([
      'reason',
      expect.stringMatching(/^Postgres refused it: .*out of range/),
      'entry',
      added[1],
    ]);
    expect(JSON.parse(dead[0][5]).id).toBe(yearZero.id);
    expect(await outbox()).toEqual({ length: 0, pending: 0 });
  });

  it('should write the entries a consumer that died left unacknowledged, once they have been idle for the claim time', async () => {
    const events = [usageEvent(), usageEvent()];
    // A worker reads two entries (in the same transaction as they are added, before the live
    // consumer can) and dies without acknowledging them.
    const tx = redis.multi();
    for (const e of events) tx.xadd(keys.events, '*', ...usageEntryFields(e));
    await tx
      .xreadgroup('GROUP', USAGE_LEDGER_GROUP, 'worker-that-died', 'COUNT', 10, 'STREAMS', keys.events, '>')
      .exec();
    const [pending, , , owners] = (await redis.xpending(keys.events, USAGE_LEDGER_GROUP)) as [
      number,
      string,
      string,
      [string, string][],
    ];
    expect(pending).toBe(2);
    expect(owners).toEqual([['worker-that-died', '2']]);

    await waitForUsageEvents(
      env.redisUrl,
      env.redisPrefix,
      events.map((e) => e.id),
    );
    expect(await ledgerCount(events.map((e) => e.id))).toBe(2);
    expect(await outbox()).toEqual({ length: 0, pending: 0 });
  });

  it('should keep the entries while the ledger cannot be written, and write them once it can', async () => {
    const events = Array.from({ length: 3 }, usageEvent);
    const ids = events.map((e) => e.id);
    await prisma.$executeRawUnsafe('ALTER TABLE "UsageEvent" RENAME TO "UsageEvent_offline"');
    try {
      const failed = log.nextError(/usage ledger batch not written/);
      await appendToUsageOutbox(redis, env.redisPrefix, events);
      expect(await failed).toMatch(/retrying in \d+ ms: .*relation "UsageEvent" does not exist/s);

      // Every entry is still in the outbox: the failed batch's pending, and any not read yet.
      const kept = await outbox();
      expect(kept.length).toBe(3);
      expect(kept.pending).toBeGreaterThan(0);
      const [{ n }] = await prisma.$queryRawUnsafe<{ n: bigint }[]>(
        'SELECT count(*) AS n FROM "UsageEvent_offline" WHERE id = ANY($1)',
        ids,
      );
      expect(n).toBe(0n);
    } finally {
      await prisma.$executeRawUnsafe('ALTER TABLE "UsageEvent_offline" RENAME TO "UsageEvent"');
    }

    await waitForUsageEvents(env.redisUrl, env.redisPrefix, ids);
    expect(await ledgerCount(ids)).toBe(3);
    expect(await outbox()).toEqual({ length: 0, pending: 0 });
  });

  it('should write every event exactly once when two workers drain the outbox, and a stopped worker leaves the group', async () => {
    const second = await startWorker();
    const secondName = second.get(UsageLedgerConsumer).consumerName;
    try {
      expect(await consumerNames()).toContain(secondName);
      const events = Array.from({ length: 600 }, usageEvent);
      const ids = events.map((e) => e.id);
      await appendToUsageOutbox(redis, env.redisPrefix, events);
      await waitForUsageEvents(env.redisUrl, env.redisPrefix, ids);
      expect(await ledgerCount(ids)).toBe(600);
      expect(await outbox()).toEqual({ length: 0, pending: 0 });
    } finally {
      await second.close();
    }
    expect(await consumerNames()).not.toContain(secondName);
    expect(await consumerNames()).toContain(worker.get(UsageLedgerConsumer).consumerName);
  });
});

/**
 * Several batches of one outbox stream in flight (LEDGER_BATCHES_IN_FLIGHT): the next batch is read
 * while the last is written, and written beside it; each is acknowledged after its own commit.
 */
describe('usage ledger consumer: batches of one stream in flight at once, on real Redis and Postgres', () => {
  let env: TestEnv;
  let worker: INestApplication;
  let prisma: PrismaService;
  let redis: Redis;
  let db: Client;
  const log = new WatchedLogger();
  const orgId = randomUUID();
  const keys = () => usageOutboxKeys(env.redisPrefix, shardOf(orgId));

  const usageEvent = () => usageEventOf(orgId);

  /** Ledger writes (a COPY, or the INSERT after a repeated id) of this database waiting for a lock, by backend pid. */
  async function blockedInserts(): Promise<number[]> {
    const { rows } = await db.query<{ pid: number }>(
      `SELECT pid FROM pg_stat_activity
       WHERE datname = current_database() AND wait_event_type = 'Lock'
         AND (query LIKE '%COPY "UsageEvent"%' OR query LIKE '%INSERT INTO "UsageEvent"%')`,
    );
    return rows.map((r) => r.pid);
  }

  async function outbox(): Promise<{ length: number; pending: number }> {
    const [length, [pending]] = await Promise.all([
      redis.xlen(keys().events),
      redis.xpending(keys().events, USAGE_LEDGER_GROUP) as Promise<[number]>,
    ]);
    return { length, pending: Number(pending) };
  }

  beforeAll(async () => {
    env = await createTestEnv({ LEDGER_BATCH_SIZE: '50', LEDGER_BATCHES_IN_FLIGHT: '2' });
    const app = await createWorkerApp(loadWorkerConfig(env.vars));
    app.useLogger(log);
    worker = await app.init();
    prisma = worker.get(PrismaService);
    redis = new Redis(env.redisUrl);
    db = new Client({ connectionString: env.vars.DATABASE_URL });
    await db.connect();
  });

  afterAll(async () => {
    await db?.end();
    await redis?.quit();
    await worker?.close();
    await env?.cleanup();
  });

  it('should write two batches of one stream at once, and every entry exactly once when both lose their connection mid-write', async () => {
    const events = Array.from({ length: 300 }, usageEvent);
    const ids = events.map((e) => e.id);
    const locker = new Client({ connectionString: env.vars.DATABASE_URL });
    await locker.connect();
    try {
      // The ledger takes no rows while this transaction holds the lock: the batches wait in Postgres.
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE "UsageEvent" IN SHARE ROW EXCLUSIVE MODE');
      await appendToUsageOutbox(redis, env.redisPrefix, events);
      // Two batches of the one stream are being written, no more; at most one more is read, waiting.
      await vi.waitFor(async () => expect(await blockedInserts()).toHaveLength(2), { timeout: 10_000 });
      expect((await outbox()).pending).toBeLessThanOrEqual(150);

      // Their connections die before anything is committed: both batches fail and stay pending.
      const failed = log.nextError(/usage ledger batch not written/);
      for (const pid of await blockedInserts()) await db.query('SELECT pg_terminate_backend($1)', [pid]);
      await locker.query('ROLLBACK');
      await failed;
    } finally {
      await locker.end();
    }

    await waitForUsageEvents(env.redisUrl, env.redisPrefix, ids);
    const { rows } = await db.query<{ id: string; n: number }>(
      'SELECT id, count(*)::int AS n FROM "UsageEvent" WHERE id = ANY($1) GROUP BY id',
      [ids],
    );
    expect(rows).toHaveLength(300);
    expect(rows.every((r) => r.n === 1)).toBe(true);
    const [{ calls }] = await prisma.$queryRaw<{ calls: bigint }[]>`
      SELECT sum(calls)::bigint AS calls FROM "UsageKeyDayRollup" WHERE "orgId" = ${orgId}::uuid`;
    expect(calls).toBe(300n);
    expect(await outbox()).toEqual({ length: 0, pending: 0 });
  });
});
