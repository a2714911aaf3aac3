import { randomUUID } from 'node:crypto';
import { loadWorkerConfig } from '@tollgate/config';
import { PrismaService } from '@tollgate/db';
import { LedgerPartitionsService, LedgerService, UsageEvent } from '@tollgate/usage';
import { SpendReportService } from '@tollgate/reporting';
import { createTestEnv, TestEnv } from '@tollgate/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/** What a spend report shows once retention dropped months of its range. */
describe('spend reports over months retention dropped', () => {
  let env: TestEnv;
  let prisma: PrismaService;

  beforeAll(async () => {
    env = await createTestEnv();
    prisma = new PrismaService(loadWorkerConfig(env.vars));
  });

  afterAll(async () => {
    await prisma?.onApplicationShutdown();
    await env?.cleanup();
  });

  it('should say where the ledger starts when the range reaches before it, and keep later months whole', async () => {
    const partitions = new LedgerPartitionsService(prisma);
    const reports = new SpendReportService(prisma);
    const org = await prisma.organization.create({ data: { name: 'r', slug: `r-${randomUUID()}` } });
    for (const m of ['2028-01-01', '2028-02-01']) await partitions.ensureAhead(new Date(`${m}T00:00:00Z`), 0);
    const event = (at: string, cost: bigint): UsageEvent => ({
      id: randomUUID(),
      orgId: org.id,
      teamId: randomUUID(),
      userId: randomUUID(),
      keyId: randomUUID(),
      upstreamId: randomUUID(),
      toolName: 'echo',
      outcome: 'OK',
      costMicros: cost,
      inputTokens: 0,
      outputTokens: 1,
      latencyMs: 1,
      priceRuleId: null,
      occurredAt: new Date(at),
    });
    await new LedgerService(prisma).writeUsageEvents([
      event('2028-01-20T10:00:00Z', 5n),
      event('2028-02-03T10:00:00Z', 7n),
    ]);

    const before = await reports.spendReport(org.id, '2028-01-01', '2028-02-28', []);
    expect(before.totals.costMicros).toBe(12n);
    expect(before.droppedBefore).toBeUndefined();

    await partitions.dropMonth('2028-01-01');
    const after = await reports.spendReport(org.id, '2028-01-01', '2028-02-28', []);
    expect(after).toMatchObject({ droppedBefore: '2028-02-01T00:00:00.000Z' });
    expect(after.totals.costMicros).toBe(7n);
    const february = await reports.spendReport(org.id, '2028-02-01', '2028-02-28', []);
    expect(february.droppedBefore).toBeUndefined();
    expect(february.totals.costMicros).toBe(7n);
  });
});
