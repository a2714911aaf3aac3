import { randomUUID } from 'node:crypto';
import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from '@prisma/client';
import { QueueName } from '@tollgate/queue';
import { waitForJobs } from '@tollgate/testing';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RunningPlatform, startPlatform } from '../support/platform';
import { orgKeyOf } from '@tollgate/redis';

describe('admin API: budget reconciliation reports drift, and repairs it when asked', () => {
  let p: RunningPlatform;
  let db: PrismaClient;
  let redis: Redis;

  async function reconcile(orgId: string, body?: unknown) {
    const res = await p.admin('POST', `/v1/orgs/${orgId}/budgets/reconcile`, body);
    expect(res.status).toBe(202);
    await waitForJobs(p.env.redisUrl, p.env.redisPrefix, QueueName.BudgetReconcile, [res.body.jobId]);
    return (await p.admin('GET', `/v1/orgs/${orgId}/budgets/reconcile`)).body;
  }

  beforeAll(async () => {
    p = await startPlatform();
    db = new PrismaClient({ adapter: new PrismaPg({ connectionString: p.env.vars.DATABASE_URL }) });
    redis = new Redis(p.env.redisUrl);
  });

  afterAll(async () => {
    redis?.disconnect();
    await db?.$disconnect();
    await p?.close();
  });

  it('should leave a drifted counter by default, set it back to the ledger with repair: true, and audit the repair', async () => {
    const org = (await p.admin('POST', '/v1/orgs', { name: 'Drift', slug: `drift-${randomUUID().slice(0, 8)}` })).body;
    const budget = (
      await p.admin('PUT', `/v1/orgs/${org.id}/budgets`, {
        scope: 'ORG',
        scopeId: org.id,
        period: 'TOTAL',
        limitMicros: 1_000_000,
      })
    ).body;
    const ids = { teamId: randomUUID(), userId: randomUUID(), keyId: randomUUID(), upstreamId: randomUUID() };
    await db.usageEvent.create({
      data: {
        id: randomUUID(),
        orgId: org.id,
        ...ids,
        toolName: 'echo',
        outcome: 'OK',
        costMicros: 2_500n,
        latencyMs: 1,
        occurredAt: new Date(),
      },
    });
    expect((await reconcile(org.id)).rebuilt).toEqual([
      expect.objectContaining({ budgetId: budget.id, ledgerSpentMicros: 2_500 }),
    ]);

    const counter = `${orgKeyOf(p.env.redisPrefix, org.id)}:budget:${budget.id}:0`;
    await redis.hincrby(counter, 'spent', 4_000);
    const reported = await reconcile(org.id);
    expect(reported.drift).toEqual([
      expect.objectContaining({
        counterSpentMicros: 6_500,
        ledgerSpentMicros: 2_500,
        outboxSpentMicros: 0,
        driftMicros: 4_000,
        repair: 'not-requested',
      }),
    ]);
    expect(await redis.hget(counter, 'spent')).toBe('6500');

    const repaired = await reconcile(org.id, { repair: true });
    expect(repaired.repaired).toEqual([
      expect.objectContaining({ budgetId: budget.id, scope: 'ORG', beforeMicros: 6_500, afterMicros: 2_500 }),
    ]);
    expect(await redis.hget(counter, 'spent')).toBe('2500');
    const audit = (await p.admin('GET', `/v1/orgs/${org.id}/audit`)).body as {
      action: string;
      details: Record<string, unknown>;
    }[];
    expect(audit.find((a) => a.action === 'budget.counter-repaired')?.details).toMatchObject({
      beforeMicros: '6500',
      afterMicros: '2500',
    });
    expect(audit.find((a) => a.action === 'budget.reconcile-requested' && a.details.repair === true)).toBeDefined();
  });

  it('should answer 400 naming the field when repair is not a boolean', async () => {
    const org = (await p.admin('POST', '/v1/orgs', { name: 'Bad', slug: `bad-${randomUUID().slice(0, 8)}` })).body;
    const res = await p.admin('POST', `/v1/orgs/${org.id}/budgets/reconcile`, { repair: 'yes' });
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body)).toMatch(/repair/);
  });
});
