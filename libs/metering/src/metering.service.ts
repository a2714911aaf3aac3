import { Injectable } from '@nestjs/common';
import { usageOutboxKeys } from '@tollgate/queue';
import { RedisService } from '@tollgate/redis';
import { UsageEvent } from './usage-event';
import { usageEntryFields } from './usage-outbox';

/**
 * Appends usage events to the usage outbox (a Redis Stream) for the worker to write to the ledger.
 * One XADD per event on the shared auto-pipelined connection: an edge records a call's event in
 * the same tick as it settles the call, so both leave in one socket write and Redis runs them in
 * order. Nothing waits in the edge's memory, so a crashing edge loses no recorded event.
 */
@Injectable()
export class MeteringService {
  private readonly stream: string;

  constructor(private readonly redis: RedisService) {
    this.stream = usageOutboxKeys(redis.prefix).events;
  }

  /**
   * Resolves once the event is in the outbox; rejects if Redis did not take it. The worker writes
   * it to the ledger keyed by the event id, so an event recorded twice is written once.
   */
  async recordUsage(event: UsageEvent): Promise<void> {
    await this.redis.client.xadd(this.stream, '*', ...usageEntryFields(event));
  }
}
