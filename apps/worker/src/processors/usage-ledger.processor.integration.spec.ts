import { randomUUID } from 'node:crypto';
import { INestApplication } from '@nestjs/common';
import { loadWorkerConfig } from '@tollgate/config';
import { PrismaService } from '@tollgate/db';
import { UsageEvent, toPayload } from '@tollgate/metering';
import { JobName, JobOf, QueueName } from '@tollgate/queue';
import { createTestEnv, TestEnv, testBullOptions } from '@tollgate/testing';
import { Job, Queue, QueueEvents } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorkerApp } from '../worker-app';

// Edges now append usage events to the outbox stream (see usage-ledger.consumer.integration.spec.ts);
// these are the jobs edges of before that queued, which a worker must still drain after an upgrade.
describe('usage ledger (legacy jobs): record-usage jobs to ledger, on real Redis, BullMQ and Postgres', () => {
  let env: TestEnv;
  let worker: INestApplication;
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

  /** Adds a job as an edge of before the outbox did, and waits for the worker's verdict on it. */
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
    const bull = testBullOptions(env.redisUrl, env.redisPrefix);
    queue = new Queue(QueueName.UsageLedger, bull);
    queueEvents = new QueueEvents(QueueName.UsageLedger, bull);
    await queueEvents.waitUntilReady();
  });

  afterAll(async () => {
    await queueEvents?.close();
    await queue?.close();
    await worker?.close();
    await env?.cleanup();
  });

  it('should write the events of a queued batch job to the ledger', async () => {
    const events = Array.from({ length: 50 }, usageEvent);
    const job = await deliver({ events: events.map(toPayload) });

    expect(await job.getState()).toBe('completed');
    const rows = await prisma.usageEvent.findMany({ where: { id: { in: events.map((e) => e.id) } } });
    expect(rows.map((r) => r.id).sort()).toEqual(events.map((e) => e.id).sort());
    expect(rows.every((r) => r.costMicros === 250_000n && r.outcome === 'OK')).toBe(true);
  });

  it('should write nothing twice when a batch is delivered again', async () => {
    const events = Array.from({ length: 20 }, usageEvent);
    const ids = events.map((e) => e.id);
    await deliver({ events: events.map(toPayload) });
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
    expect(job.failedReason).toContain(
      `event 1 (id ${bad.id}) not written: costMicros must be an integer number of micro-units`,
    );
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
    expect(await job.getState()).toBe('completed');
    expect(await ledgerCount([e.id])).toBe(1);
  });
});
