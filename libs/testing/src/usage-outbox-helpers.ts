import { usageOutboxKeys, UsageEvent, usageEntryFields } from '@tollgate/usage';
import { shardOf } from '@tollgate/redis';
import type { Redis } from 'ioredis';

/**
 * Puts usage events in the usage outbox with the fields an edge's completion script writes, for
 * tests of the worker's ledger consumer (the edge appends them in its completion step, with the
 * call's settlement; see @tollgate/admission).
 */
export async function appendToUsageOutbox(redis: Redis, prefix: string, events: UsageEvent[]): Promise<void> {
  await Promise.all(
    events.map((e) => redis.xadd(usageOutboxKeys(prefix, shardOf(e.orgId)).events, '*', ...usageEntryFields(e))),
  );
}
