import { randomUUID } from 'node:crypto';
import { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { BudgetModule } from '@tollgate/budget';
import { ConfigModule, loadWorkerConfig } from '@tollgate/config';
import { DbModule, PrismaService } from '@tollgate/db';
import { usageEntryFields, UsageEvent } from '@tollgate/metering';
import { bullConnection, JobName, QueueModule, QueueName, usageOutboxKeys } from '@tollgate/queue';
import { RedisModule } from '@tollgate/redis';
import { FinanceJobs, ReconcileReport, ReportingModule } from '@tollgate/reporting';
import { createTestEnv, TestEnv } from '@tollgate/testing';
import { QueueEvents } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUDGET_COUNTERS_PROVIDER } from '../budget-counters.provider';
import { BudgetReconcileProcessor } from './budget-reconcile.processor';

/**
 * The reconcile job on real Redis, Postgres and BullMQ, without the outbox consumer: usage events
 * put in the outbox stay there, as settled calls the worker has not written yet.
 */
describe('budget reconcile job: drift repaired against the ledger plus the outbox', () => {
  let env: TestEnv;
  let app: INestApplication;
  let prisma: PrismaService;
  let redis: Redis;
  let events: QueueEvents;
  const orgId = randomUUID();
  const keyId = randomUUID();
  const budget: Record<'ORG' | 'KEY', string> = { ORG: '', KEY: '' };

  function usageEvent(costMicros: bigint, key = keyId): UsageEvent {
    const [teamId, userId, upstreamId] = [randomUUID(), randomUUID(), randomUUID()];
    return {
      id: randomUUID(),
      orgId,
      teamId,
      userId,
      keyId: key,
      upstreamId,
      toolName: 'echo',
      outcome: 'OK',
      costMicros,
      inputTokens: 0,
      outputTokens: 1,
      latencyMs: 1,
      priceRuleId: null,
      occurredAt: new Date(),
    };
  }

  function counterKey(scope: 'ORG' | 'KEY'): string {
    const now = new Date();
    return `${env.redisPrefix}:{org:${orgId}}:budget:${budget[scope]}:${Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)}`;
  }

  async function reconcile(repair: boolean): Promise<ReconcileReport> {
    const job = await app
      .get(FinanceJobs)
      .enqueue(JobName.ReconcileBudgets, { orgId, repair }, { jobId: `reconcile-test-${randomUUID()}` });
    const [report] = (await job.waitUntilFinished(events, 30_000)) as ReconcileReport[];
    return report;
  }

  beforeAll(async () => {
    env = await createTestEnv();
    const moduleRef = await Test.createTestingModule({
      imports: [
        ConfigModule.forRoot(loadWorkerConfig(env.vars)),
        DbModule,
        RedisModule,
        QueueModule.forRoot(),
        BudgetModule,
        ReportingModule.register({ imports: [BudgetModule], budgetCounters: BUDGET_COUNTERS_PROVIDER }),
      ],
      providers: [BudgetReconcileProcessor],
    }).compile();
    app = await moduleRef.createNestApplication().init();
    prisma = app.get(PrismaService);
    redis = new Redis(env.redisUrl);
    events = new QueueEvents(QueueName.BudgetReconcile, {
      connection: bullConnection(env.redisUrl),
      prefix: `${env.redisPrefix}:bull`,
    });
    await events.waitUntilReady();
    await prisma.organization.create({ data: { id: orgId, name: 'Drift', slug: `drift-${orgId.slice(0, 8)}` } });
    for (const scope of ['ORG', 'KEY'] as const) {
      budget[scope] = (
        await prisma.budget.create({
          data: { orgId, scope, scopeId: scope === 'ORG' ? orgId : keyId, period: 'MONTH', limitMicros: 10_000_000n },
        })
      ).id;
    }
    await prisma.usageEvent.createMany({
      data: [usageEvent(1_000n), usageEvent(2_000n), usageEvent(500n, randomUUID())],
    });
  });

  afterAll(async () => {
    await events?.close();
    redis?.disconnect();
    await app?.close();
    await env?.cleanup();
  });

  it('should report a counter that drifted from the ledger plus the outbox, and repair only spent (keeping reserved and leased), with an audit entry', async () => {
    // The first pass seeds the counters from the ledger.
    const seeded = await reconcile(false);
    expect(seeded.rebuilt.map((r) => [r.scope, r.ledgerSpentMicros]).sort()).toEqual([
      ['KEY', '3000'],
      ['ORG', '3500'],
    ]);

    // A settled call whose usage event is still in the outbox: in the counters, not in the ledger.
    const pending = usageEvent(400n);
    for (const scope of ['ORG', 'KEY'] as const) await redis.hincrby(counterKey(scope), 'spent', 400);
    await redis.xadd(usageOutboxKeys(env.redisPrefix).events, '*', ...usageEntryFields(pending));
    // Calls in flight and an edge's lease: none of them is spend, and a repair must leave them.
    await redis.hset(counterKey('KEY'), 'reserved', 2_000, 'leased', 4_000);
    // A lost charge the other way round: the key's counter holds 7,000 no call accounts for.
    await redis.hincrby(counterKey('KEY'), 'spent', 7_000);

    const reported = await reconcile(false);
    expect(reported.drift).toEqual([
      expect.objectContaining({
        scope: 'KEY',
        counterSpentMicros: '10400',
        ledgerSpentMicros: '3000',
        outboxSpentMicros: '400',
        driftMicros: '7000',
        repair: 'not-requested',
      }),
    ]);
    expect(reported.repaired).toEqual([]);
    expect(await redis.hget(counterKey('KEY'), 'spent')).toBe('10400');

    const repaired = await reconcile(true);
    expect(repaired.drift).toEqual([
      expect.objectContaining({ scope: 'KEY', driftMicros: '7000', repair: 'repaired' }),
    ]);
    expect(repaired.repaired).toEqual([
      expect.objectContaining({
        budgetId: budget.KEY,
        scope: 'KEY',
        scopeId: keyId,
        beforeMicros: '10400',
        afterMicros: '3400',
      }),
    ]);
    expect(await redis.hmget(counterKey('KEY'), 'spent', 'reserved', 'leased')).toEqual(['3400', '2000', '4000']);
    expect(await redis.hget(counterKey('ORG'), 'spent')).toBe('3900');

    const audit = await prisma.auditEvent.findMany({ where: { orgId, action: 'budget.counter-repaired' } });
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({
      targetType: 'budget',
      targetId: budget.KEY,
      details: expect.objectContaining({ scope: 'KEY', beforeMicros: '10400', afterMicros: '3400' }),
    });
    expect(audit[0].actorId).toMatch(/^system:budget-reconcile:/);

    // Once the event is in the ledger (and still in the outbox until its entry is deleted), it counts once.
    await prisma.usageEvent.create({ data: { ...pending, occurredAt: pending.occurredAt } });
    const clean = await reconcile(true);
    expect(clean.drift).toEqual([]);
  });

  it('should repair a counter that is short of the ledger plus the outbox (a settlement lost with a Redis restart)', async () => {
    await redis.hincrby(counterKey('ORG'), 'spent', -900);
    const report = await reconcile(true);
    expect(report.repaired).toEqual([
      expect.objectContaining({ scope: 'ORG', beforeMicros: '3000', afterMicros: '3900' }),
    ]);
    expect(await redis.hget(counterKey('ORG'), 'spent')).toBe('3900');
  });
});
