import { randomUUID } from 'node:crypto';
import { parseHostPorts, type BaseConfig, type RedisTopology } from '@tollgate/config';
import { usageOutboxKeys } from './outbox-streams';
import { RedisService, shardOf } from '@tollgate/redis';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parseRefusalEntry, RefusedCall } from './refused-call';
import { REFUSALS_LOGGED_PER_KEY_MINUTE, RefusalRecorder } from './refusal-recorder.service';

const TOPOLOGIES: [string, () => RedisTopology][] = [
  ['standalone Redis', () => ({ kind: 'standalone', url: process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379' })],
  ['a Redis Cluster', () => ({ kind: 'cluster', nodes: parseHostPorts('cluster', inject('redisClusterNodes')) })],
];

const ORG = randomUUID();
const KEYS = [randomUUID(), randomUUID(), randomUUID()];
const TOOLS = ['read_graph', 'search'];
const CODES = ['BUDGET_EXCEEDED', 'RATE_LIMITED'];
const MINUTE = 60_000;
const T0 = Date.UTC(2026, 10, 26, 1, 0, 0);

/** One refusal of the generated sequence: which key, tool and code, and when (ms after T0). */
const refusalArb = fc.record({
  key: fc.nat({ max: KEYS.length - 1 }),
  tool: fc.nat({ max: TOOLS.length - 1 }),
  code: fc.nat({ max: CODES.length - 1 }),
  gapMs: fc.oneof(fc.constant(0), fc.nat({ max: 2_000 })),
});

describe.each(TOPOLOGIES)('RefusalRecorder on %s', (_name, topology) => {
  let redis: RedisService;
  let stream: string;

  beforeAll(() => {
    redis = new RedisService({
      redis: {
        url: '',
        prefix: `tgtest:${randomUUID()}`,
        topology: topology(),
        completionWait: { replicas: 0, timeoutMs: 1 },
      },
    } as unknown as BaseConfig);
    stream = usageOutboxKeys(redis.prefix, shardOf(ORG)).events;
  });

  afterAll(async () => {
    await redis?.client.del(stream);
    await redis?.onApplicationShutdown();
  });

  /** The refused calls in the outbox (a later command on the same stream runs after every XADD sent before it). */
  async function recorded(): Promise<RefusedCall[]> {
    await redis.client.xlen(stream);
    const entries = await redis.client.xrange(stream, '-', '+');
    return entries.map(([, fields]) => {
      const parsed = parseRefusalEntry(fields);
      if (!parsed?.refusal) throw new Error(`not a refusal entry: ${JSON.stringify(fields)}`);
      return parsed.refusal;
    });
  }

  it('should count every refusal exactly while logging at most the cap per key and minute one by one', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(refusalArb, { minLength: 1, maxLength: 600 }), async (seq) => {
        await redis.client.del(stream);
        const recorder = new RefusalRecorder(redis);
        const expected = new Map<string, number>();
        let now = T0;
        for (const r of seq) {
          now += r.gapMs;
          recorder.record(
            {
              orgId: ORG,
              teamId: ORG,
              userId: ORG,
              keyId: KEYS[r.key],
              upstreamId: null,
              toolName: TOOLS[r.tool],
              code: CODES[r.code],
              budgetId: null,
              latencyMs: 1,
              occurredAt: new Date(now),
            },
            now,
          );
          const group = `${KEYS[r.key]}/${TOOLS[r.tool]}/${CODES[r.code]}`;
          expected.set(group, (expected.get(group) ?? 0) + 1);
        }
        recorder.flushOverflow();
        const rows = await recorded();

        // Exact: the rows' calls add up to every refusal, per key, tool and code.
        const counted = new Map<string, number>();
        for (const row of rows) {
          const group = `${row.keyId}/${row.toolName}/${row.code}`;
          counted.set(group, (counted.get(group) ?? 0) + row.calls);
        }
        expect(counted).toEqual(expected);
        // Bounded: per key and minute, at most the cap logged one by one.
        const single = new Map<string, number>();
        for (const row of rows.filter((r) => r.calls === 1)) {
          const slot = `${row.keyId}/${Math.floor(row.occurredAt.getTime() / MINUTE)}`;
          single.set(slot, (single.get(slot) ?? 0) + 1);
        }
        for (const n of single.values()) expect(n).toBeLessThanOrEqual(REFUSALS_LOGGED_PER_KEY_MINUTE);
        // Every refusal under the cap is logged on its own.
        const perKeyMinute = new Map<string, number>();
        now = T0;
        for (const r of seq) {
          now += r.gapMs;
          const slot = `${KEYS[r.key]}/${Math.floor(now / MINUTE)}`;
          perKeyMinute.set(slot, (perKeyMinute.get(slot) ?? 0) + 1);
        }
        for (const [slot, n] of perKeyMinute)
          if (n <= REFUSALS_LOGGED_PER_KEY_MINUTE) expect(single.get(slot) ?? 0).toBe(n);
      }),
      { numRuns: 30 },
    );
  });

  it('should keep a key refused thousands of times to the cap plus one row per tool and code', async () => {
    await redis.client.del(stream);
    const recorder = new RefusalRecorder(redis);
    for (let i = 0; i < 5_000; i++)
      recorder.record(
        {
          orgId: ORG,
          teamId: ORG,
          userId: ORG,
          keyId: KEYS[0],
          upstreamId: null,
          toolName: 'search',
          code: 'RATE_LIMITED',
          budgetId: null,
          latencyMs: 0,
          occurredAt: new Date(T0 + i),
        },
        T0 + i,
      );
    recorder.flushOverflow();
    const rows = await recorded();
    expect(rows).toHaveLength(REFUSALS_LOGGED_PER_KEY_MINUTE + 1);
    expect(rows.reduce((s, r) => s + r.calls, 0)).toBe(5_000);
    expect(rows[rows.length - 1].calls).toBe(5_000 - REFUSALS_LOGGED_PER_KEY_MINUTE);
  });
});
