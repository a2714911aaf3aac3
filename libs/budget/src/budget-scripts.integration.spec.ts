import { LARGEST_SCRIPT_AMOUNT, orgKeyOf, RedisClient, runScript } from '@tollgate/redis';
import { deleteRedisKeys, testRedisClient, testRedisTarget, TEST_REDIS_MODES, uniqueName } from '@tollgate/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DROP_CORRUPT_COUNTER, SEED_COUNTER } from './budget-scripts';

/** Contract tests of seed-counter.lua and drop-corrupt-counter.lua through their codecs, on standalone Redis and the Redis Cluster. */
describe.each(TEST_REDIS_MODES)('seed-counter and drop-corrupt-counter on %s Redis', (mode) => {
  let redis: RedisClient;
  let prefix: string;
  let n = 0;

  beforeAll(() => {
    prefix = uniqueName('tgtest');
    redis = testRedisClient(testRedisTarget(mode, prefix));
  });

  afterAll(async () => {
    await redis.quit();
    await deleteRedisKeys(testRedisTarget(mode, prefix), prefix);
  });

  for (const spent of [0n, 1n, LARGEST_SCRIPT_AMOUNT]) {
    it(`should seed a missing counter at ${spent} once, and leave a seeded one as it is`, async () => {
      const counterKey = orgKeyOf(prefix, `o${++n}`, 'budget', 'b1', '0');
      expect(await runScript(redis, SEED_COUNTER, { counterKey, spent, ttlSeconds: 60 })).toBe(true);
      expect(await redis.hgetall(counterKey)).toEqual({ spent: spent.toString(), reserved: '0' });
      expect(await redis.ttl(counterKey)).toBeGreaterThan(50);
      await redis.hincrby(counterKey, 'reserved', 4);
      expect(await runScript(redis, SEED_COUNTER, { counterKey, spent: 9n, ttlSeconds: 60 })).toBe(false);
      expect(await redis.hgetall(counterKey)).toEqual({ spent: spent.toString(), reserved: '4' });
    });
  }

  it('should seed a counter of a period that never ends without an expiry', async () => {
    const counterKey = orgKeyOf(prefix, `o${++n}`, 'budget', 'total', '0');
    expect(await runScript(redis, SEED_COUNTER, { counterKey, spent: 3n, ttlSeconds: 0 })).toBe(true);
    expect(await redis.ttl(counterKey)).toBe(-1);
  });

  it('should drop a counter with a field that is not an integer, answering what it held, and leave readable and missing ones', async () => {
    const orgId = `o${++n}`; // one organisation: one cluster slot
    const key = (b: string) => orgKeyOf(prefix, orgId, 'budget', b, '0');
    const [corrupt, halfCorrupt, readable, missing] = [key('c'), key('h'), key('r'), key('m')];
    await redis.hset(corrupt, 'spent', 'abc', 'reserved', '3');
    await redis.hset(halfCorrupt, 'spent', '5', 'reserved', '0', 'leased', '2.5');
    await redis.hset(readable, 'spent', LARGEST_SCRIPT_AMOUNT.toString(), 'reserved', '-1', 'leased', '0');
    expect(await runScript(redis, DROP_CORRUPT_COUNTER, { counterKey: corrupt })).toEqual({
      spent: 'abc',
      reserved: '3',
      leased: '',
    });
    expect(await runScript(redis, DROP_CORRUPT_COUNTER, { counterKey: halfCorrupt })).toEqual({
      spent: '5',
      reserved: '0',
      leased: '2.5',
    });
    expect(await redis.exists(corrupt, halfCorrupt)).toBe(0);
    expect(await runScript(redis, DROP_CORRUPT_COUNTER, { counterKey: readable })).toBeNull();
    expect(await redis.hget(readable, 'spent')).toBe(LARGEST_SCRIPT_AMOUNT.toString());
    expect(await runScript(redis, DROP_CORRUPT_COUNTER, { counterKey: missing })).toBeNull();
  });
});
