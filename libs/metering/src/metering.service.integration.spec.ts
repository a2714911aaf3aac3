import { randomUUID } from 'node:crypto';
import { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { ConfigModule, loadEdgeConfig } from '@tollgate/config';
import { JobName, JobOf, JobProducer, QueueModule, QueueName, bullConnection } from '@tollgate/queue';
import { createTestEnv, TestEnv } from '@tollgate/testing';
import { Job, Queue } from 'bullmq';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { MeteringService, USAGE_BATCH_MAX_EVENTS, usageBatchJobId } from './metering.service';
import { UsageEvent, toPayload } from './usage-event';

function usageEvent(): UsageEvent {
  return {
    id: randomUUID(),
    orgId: randomUUID(),
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

// No worker consumes the queue here, so every job the service adds stays waiting to be inspected.
describe('MeteringService on real Redis and BullMQ', () => {
  let env: TestEnv;
  let queue: Queue;
  let app: INestApplication;
  let metering: MeteringService;

  async function startEdgeSide(): Promise<INestApplication> {
    const moduleRef = await Test.createTestingModule({
      imports: [ConfigModule.forRoot(loadEdgeConfig(env.vars)), QueueModule.forRoot()],
      providers: [MeteringService],
    }).compile();
    return moduleRef.createNestApplication().init();
  }

  async function queuedJobs(): Promise<Job<JobOf<JobName.RecordUsage>>[]> {
    return queue.getJobs(['waiting']);
  }

  beforeAll(async () => {
    env = await createTestEnv();
    queue = new Queue(QueueName.UsageLedger, { connection: bullConnection(env.redisUrl), prefix: `${env.redisPrefix}:bull` });
    app = await startEdgeSide();
    metering = app.get(MeteringService);
  });

  beforeEach(async () => {
    await queue.obliterate({ force: true });
  });

  afterAll(async () => {
    await app?.close();
    await queue?.close();
    await env?.cleanup();
  });

  it('should queue concurrently recorded events in far fewer jobs than events, each event exactly once', async () => {
    const events = Array.from({ length: 1_200 }, usageEvent);
    await Promise.all(events.map((e) => metering.recordUsage(e)));

    const jobs = await queuedJobs();
    const queuedIds = jobs.flatMap((j) => j.data.events.map((e) => e.id));
    expect(queuedIds.sort()).toEqual(events.map((e) => e.id).sort());
    // The first events linger together; the rest wait for that job and go in as few jobs as the cap allows.
    expect(jobs.length).toBeLessThanOrEqual(1 + Math.ceil((events.length - 1) / USAGE_BATCH_MAX_EVENTS));
    expect(Math.max(...jobs.map((j) => j.data.events.length))).toBeLessThanOrEqual(USAGE_BATCH_MAX_EVENTS);
    expect(jobs.every((j) => j.opts.attempts === 10)).toBe(true);
  });

  it('should queue each event in its own job, before its promise resolves, when events are recorded one at a time', async () => {
    const events = Array.from({ length: 5 }, usageEvent);
    for (const e of events) {
      await metering.recordUsage(e);
      // In the queue when the promise resolves: a lone event waits its linger, then goes alone.
      const job = await Job.fromId<JobOf<JobName.RecordUsage>>(queue, usageBatchJobId([e]));
      expect(job?.data.events).toEqual([toPayload(e)]);
    }
    expect(await queue.count()).toBe(events.length);
  });

  it('should add nothing when the same batch is queued again', async () => {
    const events = Array.from({ length: 3 }, usageEvent);
    await Promise.all(events.map((e) => metering.recordUsage(e)));
    const before = await queuedJobs();

    const producer = app.get(JobProducer);
    for (const job of before) await producer.enqueue(JobName.RecordUsage, job.data, usageBatchJobId(job.data.events));

    expect((await queuedJobs()).map((j) => j.id).sort()).toEqual(before.map((j) => j.id).sort());
  });

  it('should queue every recorded event before the application finishes closing', async () => {
    const closing = await startEdgeSide();
    const service = closing.get(MeteringService);
    const events = Array.from({ length: 300 }, usageEvent);
    const recorded = Promise.allSettled(events.map((e) => service.recordUsage(e)));
    await closing.close();

    expect((await recorded).every((r) => r.status === 'fulfilled')).toBe(true);
    const queuedIds = (await queuedJobs()).flatMap((j) => j.data.events.map((e) => e.id));
    expect(queuedIds.sort()).toEqual(events.map((e) => e.id).sort());
  });

  it('should reject every caller whose event could not be queued', async () => {
    const broken = await startEdgeSide();
    try {
      await broken.get(JobProducer).queue(QueueName.UsageLedger).close();
      const service = broken.get(MeteringService);
      const outcomes = await Promise.allSettled(Array.from({ length: 3 }, () => service.recordUsage(usageEvent())));
      expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected', 'rejected']);
    } finally {
      await broken.close();
    }
    expect(await queue.count()).toBe(0);
  });
});
