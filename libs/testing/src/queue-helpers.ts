import { Job, Queue, QueueEvents } from 'bullmq';
import { bullConnection, JobName, JobOf, QueueName } from '@tollgate/queue';

/** Waits for specific jobs (by id) to finish, through BullMQ's own events, not by polling. */
export async function waitForJobs(redisUrl: string, prefix: string, queue: QueueName, jobIds: string[], timeoutMs = 30_000): Promise<void> {
  const connection = bullConnection(redisUrl);
  const q = new Queue(queue, { connection, prefix: `${prefix}:bull` });
  const events = new QueueEvents(queue, { connection, prefix: `${prefix}:bull` });
  try {
    await events.waitUntilReady();
    await Promise.all(
      jobIds.map(async (id) => {
        const job = await Job.fromId(q, id);
        if (!job) throw new Error(`job ${id} not found in ${queue}`);
        await job.waitUntilFinished(events, timeoutMs);
      }),
    );
  } finally {
    await events.close();
    await q.close();
  }
}

/**
 * Waits for the usage-ledger jobs carrying these usage events (by event id, i.e. call id) to
 * finish; fails at once if one of the events is in no job. An edge answers a call only after its
 * event is queued, so every event of an answered call is in some job.
 */
export async function waitForUsageEvents(redisUrl: string, prefix: string, eventIds: string[], timeoutMs = 30_000): Promise<void> {
  const q = new Queue(QueueName.UsageLedger, { connection: bullConnection(redisUrl), prefix: `${prefix}:bull` });
  const jobIds = new Set<string>();
  const missing = new Set(eventIds);
  try {
    // One script reads every state at once, so a job moving between states is not missed.
    for (const job of await q.getJobs(['waiting', 'prioritized', 'delayed', 'active', 'completed', 'failed'])) {
      const events = (job.data as Partial<JobOf<JobName.RecordUsage>>).events ?? [];
      if (events.some((e) => missing.has(e.id))) jobIds.add(job.id!);
      for (const e of events) missing.delete(e.id);
    }
  } finally {
    await q.close();
  }
  if (missing.size > 0) throw new Error(`usage events in no ${QueueName.UsageLedger} job: ${[...missing].join(', ')}`);
  await waitForJobs(redisUrl, prefix, QueueName.UsageLedger, [...jobIds], timeoutMs);
}

/** Waits until a queue has no waiting, active or delayed jobs, using its drained event. */
export async function waitForQueueIdle(redisUrl: string, prefix: string, queue: QueueName, timeoutMs = 30_000): Promise<void> {
  const connection = bullConnection(redisUrl);
  const q = new Queue(queue, { connection, prefix: `${prefix}:bull` });
  const events = new QueueEvents(queue, { connection, prefix: `${prefix}:bull` });
  try {
    await events.waitUntilReady();
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const c = await q.getJobCounts('waiting', 'active', 'delayed', 'prioritized');
      if (c.waiting + c.active + c.delayed + c.prioritized === 0) return;
      if (Date.now() > deadline) throw new Error(`queue ${queue} not idle after ${timeoutMs} ms: ${JSON.stringify(c)}`);
      // Re-check after the next job completes (or a short cap, in case it completed before we listened).
      await new Promise<void>((resolve) => {
        const t = setTimeout(done, 250);
        function done() {
          clearTimeout(t);
          events.off('completed', done);
          events.off('failed', done);
          resolve();
        }
        events.on('completed', done);
        events.on('failed', done);
      });
    }
  } finally {
    await events.close();
    await q.close();
  }
}
