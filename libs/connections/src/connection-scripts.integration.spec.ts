import { orgKeyOf, RedisClient, runScript } from '@tollgate/redis';
import { deleteRedisKeys, testRedisClient, testRedisTarget, TEST_REDIS_MODES, uniqueName } from '@tollgate/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RELEASE_LOCK } from './connection-scripts';

/** Contract test of release-lock.lua through its codec, on standalone Redis and the Redis Cluster. */
describe.each(TEST_REDIS_MODES)('release-lock on %s Redis', (mode) => {
  let redis: RedisClient;
  let prefix: string;

  beforeAll(() => {
    prefix = uniqueName('tgtest');
    redis = testRedisClient(testRedisTarget(mode, prefix));
  });

  afterAll(async () => {
    await redis.quit();
    await deleteRedisKeys(testRedisTarget(mode, prefix), prefix);
  });

  it("should release its holder's lock and leave another holder's or a missing one alone", async () => {
    const lockKey = orgKeyOf(prefix, 'o1', 'oauth-refresh', 'c1');
    expect(await runScript(redis, RELEASE_LOCK, { lockKey, holder: 'a' })).toBe(false);
    await redis.set(lockKey, 'b');
    expect(await runScript(redis, RELEASE_LOCK, { lockKey, holder: 'a' })).toBe(false);
    expect(await redis.get(lockKey)).toBe('b');
    expect(await runScript(redis, RELEASE_LOCK, { lockKey, holder: 'b' })).toBe(true);
    expect(await redis.exists(lockKey)).toBe(0);
  });
});
