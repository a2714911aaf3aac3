import { LARGEST_SCRIPT_AMOUNT, orgKeyOf, RedisClient, runScript } from '@tollgate/redis';
import { deleteRedisKeys, testRedisClient, testRedisTarget, TEST_REDIS_MODES, uniqueName } from '@tollgate/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPAIR_HELD, REPAIR_SPENT } from './budget-reconcile-scripts';

const LARGEST = LARGEST_SCRIPT_AMOUNT;

/**
 * Contract tests of reconciliation's scripts through their codecs, on standalone Redis and the
 * Redis Cluster: the decoded answer next to what the script wrote, at 0, 1 and 2^53 - 1, with
 * missing counters and malformed records.
 */
describe.each(TEST_REDIS_MODES)("reconciliation's scripts on %s Redis", (mode) => {
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

  function org() {
    const key = (...parts: string[]) => orgKeyOf(prefix, `o${++n}`, ...parts);
    const r = key('budget-resv');
    return {
      r,
      malformed: `${r}:malformed`,
      h1: `${r.replace(/budget-resv$/, 'budget')}:b1:0`,
      h2: `${r.replace(/budget-resv$/, 'budget')}:b2:0`,
    };
  }

  describe('repair-spent', () => {
    for (const target of [0n, 1n, LARGEST]) {
      it(`should set spent to ${target} only while it still holds what was read`, async () => {
        const k = org();
        await redis.hset(k.h1, 'spent', '7', 'reserved', '3');
        expect(await runScript(redis, REPAIR_SPENT, { counterKey: k.h1, seen: 6n, target })).toBe('moved');
        expect(await redis.hget(k.h1, 'spent')).toBe('7');
        expect(await runScript(redis, REPAIR_SPENT, { counterKey: k.h1, seen: 7n, target })).toBe('set');
        expect(await redis.hgetall(k.h1)).toEqual({ spent: target.toString(), reserved: '3' });
      });
    }

    it('should leave a missing counter missing', async () => {
      const k = org();
      expect(await runScript(redis, REPAIR_SPENT, { counterKey: k.h1, seen: 0n, target: 5n })).toBe('gone');
      expect(await redis.exists(k.h1)).toBe(0);
    });
  });

  describe('repair-held', () => {
    it('should set reserved and leased to what live records hold, exactly past 2^53, and take the quarantined records', async () => {
      const k = org();
      await redis.hset(k.h1, 'spent', '0', 'reserved', '999', 'leased', 'corrupt');
      await redis.hset(k.h2, 'spent', '0', 'reserved', '0');
      await redis.hset(
        k.r,
        ...['c1', `${LARGEST}|${k.h1}|${k.h2}`],
        ...['c2', `${LARGEST}|${k.h1}`],
        ...['c3', `1|${k.h2}`],
        ...['c4', `0|${k.h2}`],
        ...['bad', `x|${k.h1}`],
        ...['L:e:1', k.h1, 'L:e:1#', LARGEST.toString()],
        ...['L:e:2', k.h1, 'L:e:2#', '1'],
        ...['L:e:3', k.h2, 'L:e:3#', 'nope'],
      );
      await redis.hset(k.malformed, 'old', `abc|${k.h1}`);
      const missing = `${k.h1}-missing`;
      expect(
        await runScript(redis, REPAIR_HELD, {
          recordsKey: k.r,
          malformedKey: k.malformed,
          counterKeys: [k.h1, k.h2, missing],
        }),
      ).toEqual({
        counters: [
          {
            reserved: { before: '999', after: 2n * LARGEST },
            leased: { before: 'corrupt', after: LARGEST + 1n },
          },
          { reserved: { before: '0', after: LARGEST + 1n }, leased: { before: '0', after: 0n } },
          null,
        ],
        malformed: [{ id: 'old', record: `abc|${k.h1}` }],
      });
      expect(await redis.hmget(k.h1, 'reserved', 'leased')).toEqual([
        (2n * LARGEST).toString(),
        (LARGEST + 1n).toString(),
      ]);
      expect(await redis.hmget(k.h2, 'reserved', 'leased')).toEqual([(LARGEST + 1n).toString(), '0']);
      expect(await redis.exists(k.malformed, missing)).toBe(0);
      expect(await redis.hlen(k.r)).toBe(11); // the records themselves are left to the sweep
    });

    it('should set counters with no record in flight to 0', async () => {
      const k = org();
      await redis.hset(k.h1, 'spent', '5', 'reserved', '1', 'leased', '1');
      expect(
        await runScript(redis, REPAIR_HELD, { recordsKey: k.r, malformedKey: k.malformed, counterKeys: [k.h1] }),
      ).toEqual({
        counters: [{ reserved: { before: '1', after: 0n }, leased: { before: '1', after: 0n } }],
        malformed: [],
      });
      expect(await redis.hgetall(k.h1)).toEqual({ spent: '5', reserved: '0', leased: '0' });
    });
  });
});
