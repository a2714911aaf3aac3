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
 * finish. An edge answers a call before its event's batch is queued (metering lingers a few
 * milliseconds to gather a batch), so this first waits for every event to be in some job.
 */
export async function waitForUsageEvents(redisUrl: string, prefix: string, eventIds: string[], timeoutMs = 30_000): Promise<void> {
  const connection = bullConnection(redisUrl);
  const q = new Queue(QueueName.UsageLedger, { connection, prefix: `${prefix}:bull` });
  const events = new QueueEvents(QueueName.UsageLedger, { connection, prefix: `${prefix}:bull` });
  const jobIds = new Set<string>();
  const missing = new Set(eventIds);
  const deadline = Date.now() + timeoutMs;
  try {
    await events.waitUntilReady();
    for (;;) {
      // One script reads every state at once, so a job moving between states is not missed.
      for (const job of await q.getJobs(['waiting', 'prioritized', 'delayed', 'active', 'completed', 'failed'])) {
        const carried = (job.data as Partial<JobOf<JobName.RecordUsage>>).events ?? [];
        if (carried.some((e) => missing.has(e.id))) jobIds.add(job.id!);
        for (const e of carried) missing.delete(e.id);
      }
      if (missing.size === 0) break;
      if (Date.now() > deadline) throw new Error(`usage events in no ${QueueName.UsageLedger} job after ${timeoutMs} ms: ${[...missing].join(', ')}`);
      // Metering batches events for a few milliseconds: look again when the next job is added.
      await nextQueueEvent(events, ['added']);
    }
  } finally {
    await Promise.all([q.close(), events.close()]);
  }
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
      // Re-check after the next job completes.
      await nextQueueEvent(events, ['completed', 'failed']);
    }
  } finally {
    await events.close();
    await q.close();
  }
}

/**
 * Resolves at the next of these queue events, or after a short cap, in case the awaited change
 * happened between the caller's last look and this listener.
 */
function nextQueueEvent(events: QueueEvents, names: ('added' | 'completed' | 'failed')[], capMs = 250): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      for (const name of names) events.off(name, done);
      resolve();
    };
    const timer = setTimeout(done, capMs);
    for (const name of names) events.on(name, done);
  });
}
