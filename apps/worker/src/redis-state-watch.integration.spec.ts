import { ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ConsoleLogger, INestApplication } from '@nestjs/common';
import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from '@prisma/client';
import { loadWorkerConfig } from '@tollgate/config';
import { QueueName } from '@tollgate/queue';
import { orgKeyOf, readRedisEpoch } from '@tollgate/redis';
import { createTestEnv, TestEnv, testBullOptions } from '@tollgate/testing';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EPOCH_SET_ACTION, RedisStateWatch } from './redis-state-watch.service';
import { createWorkerApp } from './worker-app';

/** The worker's log, so a test awaits a line the worker writes instead of sleeping. */
class WatchedLogger extends ConsoleLogger {
  private readonly watchers = new Set<(message: string) => void>();

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

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** A Redis of this test's own (never the shared one): it is flushed here. */
async function startOwnRedis(): Promise<{ url: string; stop(): Promise<void> }> {
  const port = await freePort();
  const dir = mkdtempSync(path.join(tmpdir(), 'tg-redis-'));
  const child: ChildProcess = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir],
    { stdio: 'ignore' },
  );
  const url = `redis://127.0.0.1:${port}`;
  // Refused until the server listens: a fresh try every 50 ms.
  for (;;) {
    const probe = new Redis(url, { lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0 });
    probe.on('error', () => undefined);
    const up = await probe.connect().then(
      () => probe.ping(),
      () => null,
    );
    probe.disconnect();
    if (up === 'PONG') break;
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    url,
    async stop() {
      child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

describe('Redis data loss: detected, counters rebuilt, schedulers re-created (own redis-server, real Postgres and BullMQ)', () => {
  let own: { url: string; stop(): Promise<void> };
  let env: TestEnv;
  let worker: INestApplication;
  let prisma: PrismaClient;
  let redis: Redis;
  const log = new WatchedLogger();
  const orgId = randomUUID();
  const keyId = randomUUID();
  const budgets: { id: string; scope: 'ORG' | 'KEY' }[] = [];
  let upstreamId: string;

  async function startWorker(): Promise<INestApplication> {
    const app = await createWorkerApp(loadWorkerConfig(env.vars));
    app.useLogger(log);
    await app.listen(0, '127.0.0.1');
    return app;
  }

  async function schedulerIds(queue: QueueName): Promise<string[]> {
    const q = new Queue(queue, testBullOptions(own.url, env.redisPrefix));
    try {
      return (await q.getJobSchedulers(0, -1)).map((s) => s.key).sort();
    } finally {
      await q.close();
    }
  }

  async function allSchedulers(): Promise<Record<string, string[]>> {
    const out: Record<string, string[]> = {};
    for (const q of [
      QueueName.UsageRollup,
      QueueName.BudgetAlerts,
      QueueName.BudgetReconcile,
      QueueName.TierScores,
      QueueName.OAuthRefresh,
      QueueName.CatalogSync,
    ])
      out[q] = await schedulerIds(q);
    return out;
  }

  /** Each budget's counter of its current (calendar month, UTC) period. */
  async function counters(): Promise<Record<string, string | null>> {
    const now = new Date();
    const monthStart = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1);
    const out: Record<string, string | null> = {};
    for (const b of budgets)
      out[b.scope] = await redis.hget(`${orgKeyOf(env.redisPrefix, orgId)}:budget:${b.id}:${monthStart}`, 'spent');
    return out;
  }

  beforeAll(async () => {
    own = await startOwnRedis();
    env = await createTestEnv({ REDIS_URL: own.url });
    redis = new Redis(own.url);
    prisma = new PrismaClient({ adapter: new PrismaPg({ connectionString: env.vars.DATABASE_URL }) });
    await prisma.organization.create({ data: { id: orgId, name: 'Lossy', slug: `lossy-${orgId.slice(0, 8)}` } });
    for (const scope of ['ORG', 'KEY'] as const) {
      const b = await prisma.budget.create({
        data: { orgId, scope, scopeId: scope === 'ORG' ? orgId : keyId, period: 'MONTH', limitMicros: 10_000_000n },
      });
      budgets.push({ id: b.id, scope });
    }
    // An enabled upstream: its catalog sync is one of the worker's schedulers (synced hourly; the test never waits on it).
    upstreamId = (
      await prisma.upstreamServer.create({
        data: {
          orgId,
          namespace: 'lossy',
          transport: 'STREAMABLE_HTTP',
          url: 'http://192.0.2.1/mcp',
          syncIntervalSeconds: 3600,
        },
      })
    ).id;
    const other = randomUUID();
    await prisma.usageEvent.createMany({
      data: [1_000n, 2_500n, 4_000n, 700n].map((costMicros, i) => ({
        id: randomUUID(),
        orgId,
        teamId: randomUUID(),
        userId: randomUUID(),
        keyId: i < 3 ? keyId : other,
        upstreamId,
        toolName: 'echo',
        outcome: 'OK' as const,
        costMicros,
        latencyMs: 1,
        occurredAt: new Date(),
      })),
    });
    worker = await startWorker();
  });

  afterAll(async () => {
    redis?.disconnect();
    await worker?.close();
    await prisma?.$disconnect();
    await env?.cleanup().catch(() => undefined);
    await own?.stop();
  });

  it('should set an epoch and every job scheduler at first start, record the epoch in Postgres, and be ready', async () => {
    const epoch = await readRedisEpoch(redis, env.redisPrefix);
    expect(epoch).toMatch(/^[0-9a-f-]{36}$/);
    expect(await allSchedulers()).toEqual({
      [QueueName.UsageRollup]: ['usage-rollup-recent'],
      [QueueName.BudgetAlerts]: ['budget-alerts-all'],
      [QueueName.BudgetReconcile]: ['budget-reconcile-all'],
      [QueueName.TierScores]: ['tier-scores-all'],
      [QueueName.OAuthRefresh]: ['oauth-refresh'],
      [QueueName.CatalogSync]: [`sync-${upstreamId}`],
    });
    const recorded = await prisma.auditEvent.findMany({
      where: { action: EPOCH_SET_ACTION, targetId: env.redisPrefix },
    });
    expect(recorded.map((r) => r.details)).toEqual([{ epoch, reason: 'first-start' }]);
    const ready = await request(worker.getHttpServer()).get('/readyz').expect(200);
    expect(ready.body).toEqual({
      status: 'ok',
      checks: { db: 'ok', redis: 'ok', epoch: 'ok', schedulers: 'ok' },
      missingSchedulers: [],
    });
  });

  it('should answer /readyz 503 after FLUSHALL, then rebuild counters from the ledger, re-create every scheduler and set a new epoch', async () => {
    // Counters exist before the loss (as after calls), equal to the ledger.
    await worker.get(RedisStateWatch).check();
    const before = await readRedisEpoch(redis, env.redisPrefix);
    const schedulers = await allSchedulers();

    await redis.flushall();
    const recovered = log.nextError(/Redis recovered from data loss/);
    const notReady = await request(worker.getHttpServer()).get('/readyz').expect(503);
    expect(notReady.body).toMatchObject({ status: 'unavailable', checks: { epoch: 'failed', schedulers: 'failed' } });
    expect(notReady.body.missingSchedulers).toContain('budget-reconcile/budget-reconcile-all');
    expect(await recovered).toMatch(/2 budget counter\(s\) of 1 org\(s\) rebuilt from the ledger/);

    const after = await readRedisEpoch(redis, env.redisPrefix);
    expect(after).not.toBeNull();
    expect(after).not.toBe(before);
    expect(await allSchedulers()).toEqual(schedulers);
    expect(await counters()).toEqual({ ORG: '8200', KEY: '7500' });
    await request(worker.getHttpServer()).get('/readyz').expect(200);

    const metrics = await request(worker.getHttpServer())
      .get('/metrics')
      .set('Authorization', `Bearer ${env.vars.METRICS_TOKEN}`)
      .expect(200);
    expect(metrics.text).toMatch(/^tollgate_redis_data_loss_total 1$/m);
    expect(metrics.text).toMatch(/^tollgate_redis_recovering 0$/m);
    const recorded = await prisma.auditEvent.findFirstOrThrow({
      where: { action: EPOCH_SET_ACTION, targetId: env.redisPrefix },
      orderBy: { createdAt: 'desc' },
    });
    expect(recorded.details).toMatchObject({
      epoch: after,
      reason: 'data-loss',
      lostEpoch: before,
      countersRebuilt: 2,
    });
  });

  it('should answer /readyz 503 while a job scheduler is missing, and re-create it', async () => {
    const q = new Queue(QueueName.BudgetAlerts, testBullOptions(own.url, env.redisPrefix));
    try {
      await q.removeJobScheduler('budget-alerts-all');
    } finally {
      await q.close();
    }
    const recreating = log.nextError(/job schedulers missing, re-creating them: budget-alerts\/budget-alerts-all/);
    const notReady = await request(worker.getHttpServer()).get('/readyz').expect(503);
    expect(notReady.body).toMatchObject({
      checks: { epoch: 'ok', schedulers: 'failed' },
      missingSchedulers: ['budget-alerts/budget-alerts-all'],
    });
    await recreating;
    await worker.get(RedisStateWatch).check();
    expect(await schedulerIds(QueueName.BudgetAlerts)).toEqual(['budget-alerts-all']);
    await request(worker.getHttpServer()).get('/readyz').expect(200);
  });

  it('should take a missing epoch at start for data loss when Postgres records an earlier one', async () => {
    await worker.close();
    await redis.flushall();
    const lost = log.nextError(/Redis lost its data \(epoch recorded in Postgres is gone\)/);
    worker = await startWorker();
    expect(await lost).toBeTruthy();
    expect(await readRedisEpoch(redis, env.redisPrefix)).not.toBeNull();
    expect(await counters()).toEqual({ ORG: '8200', KEY: '7500' });
    await request(worker.getHttpServer()).get('/readyz').expect(200);
  });
});
