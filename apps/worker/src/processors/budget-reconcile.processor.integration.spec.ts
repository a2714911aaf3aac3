import { randomUUID } from 'node:crypto';
import { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { BudgetModule } from '@tollgate/budget';
import { ConfigModule, loadWorkerConfig } from '@tollgate/config';
import { DbModule, PrismaService } from '@tollgate/db';
import { usageEntryFields, UsageEvent, usageOutboxKeys } from '@tollgate/usage';
import { JobName, QueueModule, QueueName } from '@tollgate/queue';
import { orgKeyOf, RedisModule, shardOf } from '@tollgate/redis';
import { BudgetReconcileService, FinanceJobs, ReconcileReport, ReportingModule } from '@tollgate/reporting';
import { createTestEnv, TestEnv, testBullOptions } from '@tollgate/testing';
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
    return `${orgKeyOf(env.redisPrefix, orgId)}:budget:${budget[scope]}:${Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)}`;
  }

  /** tollgate_money_records_repaired_total by kind, as the worker's /metrics serves it. */
  async function repairsCounted(): Promise<Record<string, number>> {
    const metric = await app
      .get(BudgetReconcileService)
      .registry.getSingleMetric('tollgate_money_records_repaired_total')!
      .get();
    return Object.fromEntries(metric.values.map((v) => [`${v.labels.kind}/${v.labels.reason}`, v.value]));
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
    events = new QueueEvents(QueueName.BudgetReconcile, testBullOptions(env.redisUrl, env.redisPrefix));
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

  it('should report a counter that drifted from the ledger plus the outbox, repair spent, and set reserved and leased to what live records hold, with audit entries', async () => {
    // The first pass seeds the counters from the ledger.
    const seeded = await reconcile(false);
    expect(seeded.rebuilt.map((r) => [r.scope, r.ledgerSpentMicros]).sort()).toEqual([
      ['KEY', '3000'],
      ['ORG', '3500'],
    ]);

    // A settled call whose usage event is still in the outbox: in the counters, not in the ledger.
    const pending = usageEvent(400n);
    for (const scope of ['ORG', 'KEY'] as const) await redis.hincrby(counterKey(scope), 'spent', 400);
    await redis.xadd(usageOutboxKeys(env.redisPrefix, shardOf(orgId)).events, '*', ...usageEntryFields(pending));
    // Held amounts with no reservation or lease record behind them (an edge's crash, a bad write):
    // not spend, and a repair sets them to what the live records hold, here nothing.
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

    expect(await repairsCounted()).toEqual({
      'spent/ledger-drift': 0,
      'reserved/records-in-flight': 0,
      'leased/records-in-flight': 0,
      'reservation/malformed': 0,
      'lease/malformed': 0,
      'counter/corrupt': 0,
    });
    const repaired = await reconcile(true);
    expect(await repairsCounted()).toMatchObject({
      'spent/ledger-drift': 1,
      'reserved/records-in-flight': 1,
      'leased/records-in-flight': 1,
    });
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
    expect(await redis.hmget(counterKey('KEY'), 'spent', 'reserved', 'leased')).toEqual(['3400', '0', '0']);
    expect(await redis.hget(counterKey('ORG'), 'spent')).toBe('3900');

    const audits = await prisma.auditEvent.findMany({ where: { orgId, action: 'budget.counter-repaired' } });
    expect(audits.map((a) => a.details)).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ field: 'reserved', beforeMicros: '2000', afterMicros: '0' }),
        expect.objectContaining({ field: 'leased', beforeMicros: '4000', afterMicros: '0' }),
      ]),
    );
    const audit = audits.filter((a) => (a.details as { field?: string }).field === undefined);
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

  it('should rebuild a counter with a field that is not an integer from the ledger plus the outbox, counted and audited, so admissions work again', async () => {
    await redis.hset(counterKey('ORG'), 'spent', 'garbage');
    const before = await repairsCounted();

    const report = await reconcile(true);
    expect((await repairsCounted())['counter/corrupt'] - before['counter/corrupt']).toBe(1);
    expect(report.corruptRebuilt).toEqual([
      { budgetId: budget.ORG, fields: expect.objectContaining({ spent: 'garbage' }) },
    ]);
    expect(report.rebuilt.map((r) => r.budgetId)).toEqual([budget.ORG]);
    expect(await redis.hget(counterKey('ORG'), 'spent')).toBe('3900');
    const audits = await prisma.auditEvent.findMany({
      where: { orgId, action: 'budget.counter-rebuilt', targetId: budget.ORG },
    });
    expect(audits).toEqual([
      expect.objectContaining({
        targetType: 'budget',
        details: expect.objectContaining({ found: expect.objectContaining({ spent: 'garbage' }) }),
      }),
    ]);
    const clean = await reconcile(true);
    expect(clean.corruptRebuilt).toBeUndefined();
    expect(clean.drift).toEqual([]);
  });

  it('should set reserved to what a live reservation holds, and audit and drop the records the sweep moved aside as malformed', async () => {
    const records = `${orgKeyOf(env.redisPrefix, orgId)}:budget-resv`;
    await redis.hset(records, 'live-1', `700|${counterKey('KEY')}`);
    await redis.hset(`${records}:malformed`, 'bad-1', `x|${counterKey('KEY')}`, 'L:e:1', `${counterKey('KEY')}#x`);
    const before = await repairsCounted();

    const report = await reconcile(true);
    const after = await repairsCounted();
    expect(after['reservation/malformed'] - before['reservation/malformed']).toBe(1);
    expect(after['lease/malformed'] - before['lease/malformed']).toBe(1);
    expect(after['reserved/records-in-flight'] - before['reserved/records-in-flight']).toBe(1);
    expect(report.heldRepaired).toEqual([
      { budgetId: budget.KEY, field: 'reserved', beforeMicros: '0', afterMicros: '700' },
    ]);
    expect(report.malformedRecords).toEqual(
      expect.arrayContaining([
        { id: 'bad-1', record: `x|${counterKey('KEY')}` },
        { id: 'L:e:1', record: `${counterKey('KEY')}#x` },
      ]),
    );
    expect(await redis.hget(counterKey('KEY'), 'reserved')).toBe('700');
    expect(await redis.exists(`${records}:malformed`)).toBe(0);
    const audits = await prisma.auditEvent.findMany({
      where: { orgId, action: 'budget.record-repaired', targetId: 'bad-1' },
    });
    expect(audits).toEqual([
      expect.objectContaining({
        targetType: 'budget-record',
        targetId: 'bad-1',
        details: expect.objectContaining({ record: `x|${counterKey('KEY')}` }),
      }),
    ]);
    await redis.del(records);
  });
});
