import { randomUUID } from 'node:crypto';
import { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { ConfigModule, loadEdgeConfig, loadWorkerConfig } from '@tollgate/config';
import { PrismaService } from '@tollgate/db';
import { MeteringService, UsageEvent, toPayload } from '@tollgate/metering';
import { JobName, JobOf, QueueModule, QueueName, bullConnection } from '@tollgate/queue';
import { createTestEnv, TestEnv, waitForJobs, waitForUsageEvents } from '@tollgate/testing';
import { Job, Queue, QueueEvents } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorkerApp } from '../worker-app';

describe('usage ledger: edge metering to worker to ledger, on real Redis, BullMQ and Postgres', () => {
  let env: TestEnv;
  let worker: INestApplication;
  let edge: INestApplication;
  let metering: MeteringService;
  let prisma: PrismaService;
  let queue: Queue;
  let queueEvents: QueueEvents;
  const orgId = randomUUID();

  function usageEvent(): UsageEvent {
    return {
      id: randomUUID(),
      orgId,
      teamId: randomUUID(),
      userId: randomUUID(),
      keyId: randomUUID(),
      upstreamId: randomUUID(),
      toolName: 'echo',
      outcome: 'OK',
      costMicros: 250_000n,
      inputTokens: 0,
      outputTokens: 12,
      latencyMs: 3,
      priceRuleId: null,
      occurredAt: new Date(),
    };
  }

  async function ledgerCount(ids: string[]): Promise<number> {
    return prisma.usageEvent.count({ where: { id: { in: ids } } });
  }

  async function jobsRun(): Promise<number> {
    const c = await queue.getJobCounts('completed', 'failed');
    return c.completed + c.failed;
  }

  /** Adds a job as any producer could, and waits for the worker's verdict on it. */
  async function deliver(data: unknown, jobId: string = randomUUID()): Promise<Job> {
    const job = await queue.add(JobName.RecordUsage, data as JobOf<JobName.RecordUsage>, { jobId, attempts: 10 });
    await job.waitUntilFinished(queueEvents).catch(() => undefined);
    return (await Job.fromId(queue, jobId))!;
  }

  beforeAll(async () => {
    env = await createTestEnv();
    worker = await createWorkerApp(loadWorkerConfig(env.vars));
    await worker.init();
    prisma = worker.get(PrismaService);
    const moduleRef = await Test.createTestingModule({
      imports: [ConfigModule.forRoot(loadEdgeConfig(env.vars)), QueueModule.forRoot()],
      providers: [MeteringService],
    }).compile();
    edge = await moduleRef.createNestApplication().init();
    metering = edge.get(MeteringService);
    const connection = bullConnection(env.redisUrl);
    queue = new Queue(QueueName.UsageLedger, { connection, prefix: `${env.redisPrefix}:bull` });
    queueEvents = new QueueEvents(QueueName.UsageLedger, { connection, prefix: `${env.redisPrefix}:bull` });
    await queueEvents.waitUntilReady();
  });

  afterAll(async () => {
    await queueEvents?.close();
    await queue?.close();
    await edge?.close();
    await worker?.close();
    await env?.cleanup();
  });

  it('should write every concurrently recorded event to the ledger exactly once, from far fewer jobs than events', async () => {
    const before = await jobsRun();
    const events = Array.from({ length: 400 }, usageEvent);
    await Promise.all(events.map((e) => metering.recordUsage(e)));
    const ids = events.map((e) => e.id);
    await waitForUsageEvents(env.redisUrl, env.redisPrefix, ids);

    const rows = await prisma.usageEvent.findMany({ where: { id: { in: ids } } });
    expect(rows.map((r) => r.id).sort()).toEqual([...ids].sort());
    expect(rows.every((r) => r.costMicros === 250_000n && r.outcome === 'OK')).toBe(true);
    expect((await jobsRun()) - before).toBeLessThanOrEqual(2);
  });

  it('should write each event recorded one at a time to the ledger', async () => {
    for (let i = 0; i < 3; i++) {
      const e = usageEvent();
      await metering.recordUsage(e);
      await waitForUsageEvents(env.redisUrl, env.redisPrefix, [e.id]);
      expect(await ledgerCount([e.id])).toBe(1);
    }
  });

  it('should write nothing twice when a batch is delivered again', async () => {
    const events = Array.from({ length: 50 }, usageEvent);
    await Promise.all(events.map((e) => metering.recordUsage(e)));
    const ids = events.map((e) => e.id);
    await waitForUsageEvents(env.redisUrl, env.redisPrefix, ids);
    const first = await prisma.usageEvent.findMany({ where: { id: { in: ids } }, orderBy: { id: 'asc' } });

    // The whole batch again under a fresh job id, so BullMQ runs it: only the ledger can refuse it.
    const again = await deliver({ events: events.map(toPayload) });
    expect(await again.getState()).toBe('completed');
    expect(await prisma.usageEvent.findMany({ where: { id: { in: ids } }, orderBy: { id: 'asc' } })).toEqual(first);
  });

  it('should write the valid events of a batch and discard the job, without retrying, when one event is malformed', async () => {
    const good = usageEvent();
    const bad = { ...toPayload(usageEvent()), costMicros: 'a lot' };
    const job = await deliver({ events: [toPayload(good), bad] });

    expect(await job.getState()).toBe('failed');
    expect(job.attemptsMade).toBe(1);
    expect(job.failedReason).toContain(`event 1 (id ${bad.id}) not written: costMicros must be an integer number of micro-units`);
    expect(await ledgerCount([good.id, bad.id])).toBe(1);
  });

  it('should discard, without retrying, a job whose payload is not a usage batch', async () => {
    for (const data of [{ events: [] }, { rows: [1, 2] }]) {
      const job = await deliver(data);
      expect(await job.getState()).toBe('failed');
      expect(job.attemptsMade).toBe(1);
    }
  });

  it('should write a single bare event left in the queue by an edge from before batching', async () => {
    const e = usageEvent();
    const job = await deliver(toPayload(e), e.id);
    await waitForJobs(env.redisUrl, env.redisPrefix, QueueName.UsageLedger, [job.id!]);
    expect(await ledgerCount([e.id])).toBe(1);
  });
});
