import { randomUUID } from 'node:crypto';
import { USAGE_ENTRY_FIELD } from './outbox-streams';
import { RedisService, shardOf } from '@tollgate/redis';
import { describe, expect, it } from 'vitest';
import { MeteringService } from './metering.service';
import { toPayload, UsageEvent } from './usage-event';
import { parseUsageEntry } from './outbox-entry';

describe('MeteringService.outboxEntry', () => {
  it("should name the outbox stream of the org's shard and carry the event as its payload", () => {
    const e: UsageEvent = {
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
    const entry = new MeteringService({ prefix: 'tg' } as RedisService).outboxEntry(e);
    // The stream shares the org's shard tag with its counters, so one script can write both on a cluster.
    expect(entry.stream).toBe(`tg:{s${shardOf(e.orgId)}}:usage:events`);
    expect(entry.fields).toEqual([USAGE_ENTRY_FIELD, JSON.stringify(toPayload(e))]);
    expect(parseUsageEntry(entry.fields)).toEqual({ event: e, eventId: e.id });
  });
});
