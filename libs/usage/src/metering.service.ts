import { Injectable } from '@nestjs/common';
import { UsageOutboxEntry, usageOutboxKeys } from './outbox-streams';
import { RedisService, shardOf } from '@tollgate/redis';
import { UsageEvent } from './usage-event';
import { usageEntryFields } from './outbox-entry';

/**
 * Usage events for the usage outbox (a Redis Stream) that the worker writes to the ledger. The
 * edge appends a call's event in the same script as the call's settlement (the completion step of
 * @tollgate/admission), from `outboxEntry`.
 */
@Injectable()
export class MeteringService {
  // Each shard's stream name, made once (an event is appended on every call).
  private readonly streams: string[] = [];

  constructor(private readonly redis: RedisService) {}

  /** The outbox entry of an event (in its organisation's shard), for a script that appends it with other writes. */
  outboxEntry(event: UsageEvent): UsageOutboxEntry {
    const shard = shardOf(event.orgId);
    const stream = (this.streams[shard] ??= usageOutboxKeys(this.redis.prefix, shard).events);
    return { stream, fields: usageEntryFields(event) };
  }
}
