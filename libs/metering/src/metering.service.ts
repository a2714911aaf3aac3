import { Injectable } from '@nestjs/common';
import { usageOutboxKeys } from '@tollgate/queue';
import { RedisService } from '@tollgate/redis';
import { UsageEvent } from './usage-event';
import { usageEntryFields } from './usage-outbox';

/** A usage event as an entry of the usage outbox: the stream and the entry's field and value. */
export interface UsageOutboxEntry {
  stream: string;
  fields: [string, string];
}

/**
 * Usage events for the usage outbox (a Redis Stream) that the worker writes to the ledger. The
 * edge appends a call's event in the same script as the call's settlement (the completion step of
 * @tollgate/admission), from `outboxEntry`.
 */
@Injectable()
export class MeteringService {
  private readonly stream: string;

  constructor(private readonly redis: RedisService) {
    this.stream = usageOutboxKeys(redis.prefix).events;
  }

  /** The outbox entry of an event, for a script that appends it with other writes. */
  outboxEntry(event: UsageEvent): UsageOutboxEntry {
    return { stream: this.stream, fields: usageEntryFields(event) };
  }
}
