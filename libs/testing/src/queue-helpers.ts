import { Job, Queue, QueueEvents } from 'bullmq';
import { QueueName } from '@tollgate/queue';
import {
  USAGE_ENTRY_FIELD,
  USAGE_LEDGER_WRITTEN_CHANNEL,
  UsageLedgerNotice,
  allUsageOutboxKeys,
} from '@tollgate/usage';
import { channelName, duplicateRedisClient, REDIS_SHARDS, RedisClient } from '@tollgate/redis';
import { RedisTarget, testBullOptions, testRedisClient } from './test-redis';

/** Waits for specific jobs (by id) to finish, through BullMQ's own events, not by polling. */
export async function waitForJobs(
  redis: RedisTarget,
  prefix: string,
  queue: QueueName,
  jobIds: string[],
  timeoutMs = 30_000,
): Promise<void> {
  const bull = testBullOptions(redis, prefix);
  const q = new Queue(queue, bull);
  const events = await queueEventsFromNow(redis, q, bull);
  try {
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
    await bull.close();
  }
}

/**
 * QueueEvents that hear every event of the queue from this moment. BullMQ's default ('$') starts
 * at its first XREAD, which a busy machine can send after the caller has looked at the job and
 * after the job then finished: that event was lost and the wait ran out (seen in CI at load ~20).
 */
async function queueEventsFromNow(
  redis: RedisTarget,
  q: Queue,
  bull: ReturnType<typeof testBullOptions>,
): Promise<QueueEvents> {
  const client = testRedisClient(redis);
  const [last] = await client.xrevrange(q.backend.keys.events, '+', '-', 'COUNT', 1).finally(() => client.quit());
  const events = new QueueEvents(q.name, { ...bull, lastEventId: last?.[0] ?? '0-0' });
  await events.waitUntilReady();
  return events;
}

/**
 * Waits until these usage events (by event id, i.e. call id) are in the ledger, from the worker's
 * own announcements (`UsageLedgerNotice` on the usage-ledger-written channel), not by polling.
 * Call it once the events are in the usage outbox: `appendToUsageOutbox` resolved, or an
 * edge answered the call (the edge sends the call's XADD in the event-loop turn it answers in, so
 * Redis has it before a new connection of the caller can ask). An event absent from the outbox
 * counts as written: the worker deletes an entry only after its INSERT. Rejects at once for an
 * event the worker dead-lettered.
 */
export async function waitForUsageEvents(
  redis: RedisTarget,
  prefix: string,
  eventIds: string[],
  timeoutMs = 30_000,
): Promise<void> {
  const streams = allUsageOutboxKeys(prefix, REDIS_SHARDS);
  const missing = new Set(eventIds);
  const reader = testRedisClient(redis);
  const subscriber = duplicateRedisClient(reader);
  let settle: (err?: Error) => void = () => undefined;
  const done = new Promise<void>((resolve, reject) => {
    settle = (err) => (err ? reject(err) : resolve());
  });
  // Awaited below; this only keeps a rejection that comes before that from counting as unhandled.
  done.catch(() => undefined);
  const deadLettered = (ids: string[]) => new Error(`usage events dead-lettered, never written: ${ids.join(', ')}`);
  const timer = setTimeout(
    () => settle(new Error(`usage events not in the ledger after ${timeoutMs} ms: ${[...missing].join(', ')}`)),
    timeoutMs,
  );
  try {
    subscriber.on('message', (_channel: string, message: string) => {
      const notice = JSON.parse(message) as UsageLedgerNotice;
      const dead = notice.deadLettered.filter((id) => missing.has(id));
      if (dead.length > 0) settle(deadLettered(dead));
      for (const id of notice.written) missing.delete(id);
      if (missing.size === 0) settle();
    });
    await subscriber.subscribe(channelName(prefix, USAGE_LEDGER_WRITTEN_CHANNEL));
    // Subscribed first, so every write from now on is announced. An event no longer in the outbox
    // was written (or dead-lettered) before: the worker deletes an entry only after its INSERT.
    const [waiting, dead] = await Promise.all([
      usageEventIdsIn(
        reader,
        streams.map((k) => k.events),
      ),
      usageEventIdsIn(
        reader,
        streams.map((k) => k.dead),
      ),
    ]);
    const deadNow = [...missing].filter((id) => dead.has(id));
    if (deadNow.length > 0) throw deadLettered(deadNow);
    for (const id of [...missing]) if (!waiting.has(id)) missing.delete(id);
    if (missing.size === 0) settle();
    await done;
  } finally {
    clearTimeout(timer);
    await Promise.allSettled([subscriber.quit(), reader.quit()]);
  }
}

/** The event ids the entries of these outbox streams name, page by page. */
async function usageEventIdsIn(redis: RedisClient, streams: string[]): Promise<Set<string>> {
  const ids = new Set<string>();
  for (const stream of streams) {
    let start = '-';
    for (;;) {
      const page = await redis.xrange(stream, start, '+', 'COUNT', 1000);
      for (const [, fields] of page) {
        const id = eventIdOf(fields);
        if (id) ids.add(id);
      }
      if (page.length < 1000) break;
      start = `(${page[page.length - 1][0]}`;
    }
  }
  return ids;
}

/** The `id` of an entry's usage event payload; null for an entry that names none. */
function eventIdOf(fields: string[]): string | null {
  for (let i = 0; i + 1 < fields.length; i += 2) {
    if (fields[i] !== USAGE_ENTRY_FIELD) continue;
    try {
      const id = (JSON.parse(fields[i + 1]) as { id?: unknown } | null)?.id;
      return typeof id === 'string' ? id : null;
    } catch {
      return null;
    }
  }
  return null;
}

/** Waits until a queue has no waiting, active or delayed jobs, using its drained event. */
export async function waitForQueueIdle(
  redis: RedisTarget,
  prefix: string,
  queue: QueueName,
  timeoutMs = 30_000,
): Promise<void> {
  const bull = testBullOptions(redis, prefix);
  const q = new Queue(queue, bull);
  const events = await queueEventsFromNow(redis, q, bull);
  try {
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
    await bull.close();
  }
}

/**
 * Resolves at the next of these queue events, or after a short cap, in case the awaited change
 * happened between the caller's last look and this listener.
 */
function nextQueueEvent(events: QueueEvents, names: ('completed' | 'failed')[], capMs = 250): Promise<void> {
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
