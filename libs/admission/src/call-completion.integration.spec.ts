import { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { BudgetAdminService } from '@tollgate/budget';
import { ConfigModule, loadEdgeConfig } from '@tollgate/config';
import { DbModule, PrismaService } from '@tollgate/db';
import { RateLimitAdminService } from '@tollgate/rate-limit';
import { ensureRedisEpoch, orgKeyOf, redisEpochKey, RedisModule, runScript, shardKey, shardOf } from '@tollgate/redis';
import { UsageOutboxEntry, usageOutboxKeys } from '@tollgate/usage';
import { createTestEnv, TestEnv, auditedByTest } from '@tollgate/testing';
import { ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdmissionModule } from './admission.module';
import { AdmissionException, AdmissionExceptionCode } from './admission.exception';
import { AdmissionLeases } from './admission-leases';
import { CallAdmissionService, CallHold, COUNTERS_REBUILD_RETRY_MS } from './call-admission.service';
import { COMPLETE_CALLS } from './admission-scripts';

const COMPLETE_SHA = COMPLETE_CALLS.script.sha;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/** A Redis of this test's own: it is paused, monitored and filled up here, never the shared one. */
async function startOwnRedis(): Promise<{ url: string; stop(): void }> {
  const port = await freePort();
  const dir = mkdtempSync(path.join(tmpdir(), 'tg-redis-'));
  const child: ChildProcess = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir],
    { stdio: 'ignore' },
  );
  const url = `redis://127.0.0.1:${port}`;
  const probe = new Redis(url, { lazyConnect: true, retryStrategy: () => 50, maxRetriesPerRequest: null });
  probe.on('error', () => undefined);
  await probe.connect().catch(() => undefined);
  await probe.ping();
  probe.disconnect();
  return {
    url,
    stop() {
      child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

describe('The completion step: settlement and usage event in one acknowledged script (own redis-server, real Postgres)', () => {
  let own: { url: string; stop(): void };
  let env: TestEnv;
  let app: INestApplication;
  let admission: CallAdmissionService;
  let redis: Redis;
  let caller: { orgId: string; teamId: string; userId: string; keyId: string; timeZone: string };
  let budgetKey: () => Promise<string>;
  const tool = { namespace: 'fixture', tool: 'echo' };
  let stream: string;
  let n = 0;

  const usage = (callId: string): UsageOutboxEntry => ({ stream, fields: ['e', JSON.stringify({ id: callId })] });
  const eventIds = async () => (await redis.xrange(stream, '-', '+')).map(([, f]) => JSON.parse(f[1]).id as string);
  const spent = async () => Number(await redis.hget(await budgetKey(), 'spent'));

  async function admitted(): Promise<{ id: string; hold: CallHold }> {
    const id = `call-${++n}`;
    const a = await admission.admit(caller, tool, id, 1_000n, Date.now());
    if (!a.ok) throw new Error('expected the call to be admitted');
    return { id, hold: a.hold };
  }

  beforeAll(async () => {
    own = await startOwnRedis();
    env = await createTestEnv({ REDIS_URL: own.url });
    const moduleRef = await Test.createTestingModule({
      imports: [
        ConfigModule.forRoot(loadEdgeConfig(env.vars)),
        DbModule,
        RedisModule,
        AdmissionModule.forSettings({ reservationTtlMs: 30_000, leases: true, leaseIdleMs: 60_000 }),
      ],
      providers: [BudgetAdminService, RateLimitAdminService],
    }).compile();
    app = moduleRef.createNestApplication();
    await app.init();
    admission = app.get(CallAdmissionService);
    redis = new Redis(own.url);
    await ensureRedisEpoch(redis, env.redisPrefix); // what the worker sets at its first start
    const prisma = app.get(PrismaService);
    const org = await prisma.organization.create({ data: { name: 'o', slug: 'o' } });
    const team = await prisma.team.create({ data: { orgId: org.id, name: 't' } });
    const user = await prisma.user.create({ data: { orgId: org.id, email: 'u@x' } });
    const key = await prisma.virtualKey.create({
      data: { orgId: org.id, teamId: team.id, userId: user.id, name: 'k', prefix: 'tg_x', secretHash: 'h' },
    });
    stream = usageOutboxKeys(env.redisPrefix, shardOf(org.id)).events;
    caller = { orgId: org.id, teamId: team.id, userId: user.id, keyId: key.id, timeZone: org.timeZone };
    const { budget } = await app
      .get(BudgetAdminService)
      .putBudget(
        org.id,
        { scope: 'KEY', scopeId: key.id, period: 'MONTH', limitMicros: 1_000_000_000n, mode: 'HARD' },
        auditedByTest('budget.created', 'budget'),
      );
    await app.get(RateLimitAdminService).createRateLimit(
      org.id,
      {
        scope: 'KEY',
        scopeId: key.id,
        toolPattern: 'fixture:*',
        windowSeconds: 3600,
        maxConcurrent: 1_000,
      },
      auditedByTest('rate-limit.created', 'rate-limit'),
    );
    budgetKey = async () => (await redis.keys(`${orgKeyOf(env.redisPrefix, org.id)}:budget:${budget.id}:*`))[0];
  });

  afterAll(async () => {
    await app?.close();
    redis?.disconnect();
    await env?.cleanup();
    own?.stop();
  });

  it('should write every call completed in one turn (reserved and leased) in one script, each answered only once its charge and usage event are in Redis', async () => {
    // The first call seeds the counter (checked in Redis, a reservation); the others run under leases.
    const calls = [await admitted()];
    await admission.complete(calls[0].hold, 700n, usage(calls[0].id));
    for (let i = 0; i < 7; i++) calls.push(await admitted());
    calls.push(await admitted());
    expect(calls.slice(1).every((c) => c.hold.leased)).toBe(true);

    const monitor = await redis.monitor();
    const seen: { command: string; sha?: string; fromScript: boolean }[] = [];
    monitor.on('monitor', (_time: string, args: string[], source: string) =>
      seen.push({ command: args[0].toLowerCase(), sha: args[1], fromScript: source === 'lua' }),
    );
    // MONITOR confirms it is on with its own OK; a PING from another client marks where the test's commands start.
    await redis.ping();
    const before = await spent();

    // All complete in the same turn; each answer (the promise) looks at Redis the moment it resolves.
    const answers = await Promise.all(
      calls.slice(1).map(async (c) => {
        await admission.complete(c.hold, 700n, usage(c.id));
        return { id: c.id, events: await eventIds(), spent: await spent() };
      }),
    );
    for (const a of answers) {
      expect(a.events).toContain(a.id);
      expect(a.spent).toBe(before + 8 * 700);
    }
    await redis.ping();
    await expect.poll(() => seen.filter((s) => s.command === 'ping').length).toBeGreaterThanOrEqual(2);
    monitor.disconnect();

    // One completion script carried the 8 settlements and events: no XADD or counter write of its own.
    const between = seen.slice(seen.findIndex((s) => s.command === 'ping') + 1);
    const top = between.filter((s) => !s.fromScript);
    expect(top.filter((s) => s.command === 'evalsha' && s.sha === COMPLETE_SHA)).toHaveLength(1);
    expect(top.filter((s) => ['xadd', 'hincrby', 'zrem', 'hdel'].includes(s.command))).toEqual([]);
    expect(between.filter((s) => s.fromScript && s.command === 'xadd')).toHaveLength(8);
  });

  it('should apply a script that arrives after a later one, and a resent script once', async () => {
    // After a Redis restart an edge's EVALSHA of turn n is answered NOSCRIPT and sent again as EVAL,
    // while its EVALSHA of turn n+1 may already run (another edge loaded the script meanwhile).
    const seqKey = shardKey(env.redisPrefix, shardOf(caller.orgId), 'completion', 'order-test', '0');
    const epochKey = redisEpochKey(env.redisPrefix, shardOf(caller.orgId));
    const run = (bit: number, callId: string) =>
      runScript(redis, COMPLETE_CALLS, {
        bitmapKey: seqKey,
        bit,
        outboxKey: stream,
        epochKey,
        settlements: [],
        conversions: [],
        events: [['e', JSON.stringify({ id: callId })]],
      });
    await run(2, 'turn-2');
    await run(1, 'turn-1');
    expect(await run(1, 'turn-1')).toEqual({ kind: 'already-run' }); // resent after a reconnect
    const events = await eventIds();
    expect(events.filter((id) => id === 'turn-1' || id === 'turn-2').sort()).toEqual(['turn-1', 'turn-2']);
  });

  it('should not answer a call while Redis has not acknowledged its completion (CLIENT PAUSE WRITE)', async () => {
    const call = await admitted();
    const pausedAt = Date.now();
    await redis.client('PAUSE', 500, 'WRITE');
    let answered = false;
    const completion = admission.complete(call.hold, 700n, usage(call.id)).then(() => {
      answered = true;
      return Date.now();
    });
    // Reads still run while writes are paused: the event is not there, and the call is not answered.
    expect(await eventIds()).not.toContain(call.id);
    expect(answered).toBe(false);
    const answeredAt = await completion;
    expect(answeredAt - pausedAt).toBeGreaterThanOrEqual(490);
    expect(await eventIds()).toContain(call.id);
  });

  it('should refuse to say a call succeeded when Redis refuses its completion, and record none of it', async () => {
    const call = await admitted();
    const [eventsBefore, spentBefore] = [await eventIds(), await spent()];
    await redis.config('SET', 'maxmemory', '1');
    try {
      const refused = await admission.complete(call.hold, 700n, usage(call.id)).catch((err: unknown) => err);
      expect(refused).toBeInstanceOf(AdmissionException);
      expect((refused as AdmissionException).code).toBe(AdmissionExceptionCode.CompletionNotRecorded);
    } finally {
      await redis.config('SET', 'maxmemory', '0');
    }
    expect(await eventIds()).toEqual(eventsBefore);
    expect(await spent()).toBe(spentBefore);
  });

  it('should refuse calls (retryable) and drop every lease once Redis lost its data, until the epoch is set again', async () => {
    const leases = app.get(AdmissionLeases);
    // A fresh counter period would do as well: here the lease is made by two calls.
    for (let i = 0; i < 2; i++) {
      const c = await admitted();
      await admission.complete(c.hold, 700n, usage(c.id));
    }
    expect(leases.holdings().budgetMicros).toBeGreaterThan(0n);

    await redis.flushall(); // Redis lost everything: counters, leases, the outbox, the epoch
    // A call admitted in memory under a lease still completes; its usage event is kept for the ledger,
    // and the completion tells this edge the epoch is gone: every lease is dropped.
    const inMemory = await admitted();
    await admission.complete(inMemory.hold, 700n, usage(inMemory.id));
    expect(await eventIds()).toEqual([inMemory.id]);
    expect(leases.holdings()).toEqual({ budgetMicros: 0n, windowCalls: 0, slots: 0 });
    const refused = await admission.admit(caller, tool, 'while-lost', 1_000n, Date.now());
    expect(refused).toEqual({
      ok: false,
      countersUnavailable: { retryAfterMs: COUNTERS_REBUILD_RETRY_MS, reason: 'data-lost' },
    });
    // The edge's /readyz runs a no-op admission on every shard: not ready while counters are gone.
    await expect(admission.probe()).rejects.toThrow(/no epoch/);

    // The worker has rebuilt what it could and set a new epoch: calls are admitted again.
    await ensureRedisEpoch(redis, env.redisPrefix);
    await admission.probe();
    const after = await admission.admit(caller, tool, 'after-rebuild', 1_000n, Date.now());
    expect(after.ok).toBe(true);
    if (after.ok) await admission.complete(after.hold, 700n, null);
  });
});
