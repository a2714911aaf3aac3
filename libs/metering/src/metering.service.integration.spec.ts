import { randomUUID } from 'node:crypto';
import { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { ConfigModule, loadEdgeConfig } from '@tollgate/config';
import { USAGE_ENTRY_FIELD, usageOutboxKeys } from '@tollgate/queue';
import { RedisModule, RedisService } from '@tollgate/redis';
import { createTestEnv, TestEnv } from '@tollgate/testing';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { MeteringService } from './metering.service';
import { UsageEvent, toPayload } from './usage-event';
import { parseUsageEntry } from './usage-outbox';

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

// No worker drains the outbox here, so every entry the service adds stays in the stream to be inspected.
describe('MeteringService on real Redis', () => {
  let env: TestEnv;
  let app: INestApplication;
  let metering: MeteringService;
  let redis: Redis;
  let stream: string;

  async function startEdgeSide(): Promise<INestApplication> {
    const moduleRef = await Test.createTestingModule({
      imports: [ConfigModule.forRoot(loadEdgeConfig(env.vars)), RedisModule],
      providers: [MeteringService],
    }).compile();
    return moduleRef.createNestApplication().init();
  }

  async function outboxEntries(): Promise<[id: string, fields: string[]][]> {
    return redis.xrange(stream, '-', '+');
  }

  beforeAll(async () => {
    env = await createTestEnv();
    app = await startEdgeSide();
    metering = app.get(MeteringService);
    redis = new Redis(env.redisUrl);
    stream = usageOutboxKeys(env.redisPrefix).events;
  });

  beforeEach(async () => {
    await redis.del(stream);
  });

  afterAll(async () => {
    await app?.close();
    await redis?.quit();
    await env?.cleanup();
  });

  it('should have the event in the outbox, as its payload, when its promise resolves', async () => {
    for (let i = 0; i < 3; i++) {
      const e = usageEvent();
      await metering.recordUsage(e);
      const entries = await outboxEntries();
      expect(entries).toHaveLength(i + 1);
      const [, fields] = entries[i];
      expect(fields).toEqual([USAGE_ENTRY_FIELD, JSON.stringify(toPayload(e))]);
      expect(parseUsageEntry(fields)).toEqual({ event: e, eventId: e.id });
    }
  });

  it('should add each of many concurrently recorded events to the outbox exactly once', async () => {
    const events = Array.from({ length: 1_200 }, usageEvent);
    await Promise.all(events.map((e) => metering.recordUsage(e)));

    const recorded = (await outboxEntries()).map(([, fields]) => parseUsageEntry(fields).event?.id);
    expect(recorded.sort()).toEqual(events.map((e) => e.id).sort());
  });

  it('should add an event recorded twice twice, leaving the ledger to write it once', async () => {
    const e = usageEvent();
    await Promise.all([metering.recordUsage(e), metering.recordUsage(e)]);
    expect((await outboxEntries()).map(([, fields]) => parseUsageEntry(fields).eventId)).toEqual([e.id, e.id]);
  });

  it('should reject the caller when Redis cannot take the event', async () => {
    const broken = await startEdgeSide();
    try {
      broken.get(RedisService).client.disconnect();
      const outcomes = await Promise.allSettled(
        Array.from({ length: 3 }, () => broken.get(MeteringService).recordUsage(usageEvent())),
      );
      expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected', 'rejected']);
    } finally {
      await broken.close();
    }
    expect(await outboxEntries()).toEqual([]);
  });
});
