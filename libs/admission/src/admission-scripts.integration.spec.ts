import { RedisConfig } from '@tollgate/config';
import { LARGEST_SCRIPT_AMOUNT, orgKeyOf, RedisClient, runScript, ScriptCodec } from '@tollgate/redis';
import { deleteRedisKeys, testRedisClient, testRedisTarget, TEST_REDIS_MODES, uniqueName } from '@tollgate/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ADMIT_AND_RESERVE,
  COMPLETE_CALLS,
  CompleteCallsInput,
  EXTEND_HOLD,
  LEASE_GRANT,
  LEASE_RELEASE,
  LEASE_RENEW,
  LeaseGrantInput,
} from './admission-scripts';
import { AdmissionException } from './admission.exception';
import { CallCompletion } from './call-completion';

/** The largest amount the API takes (a JSON integer below 2^53, see microsToJson) and the scripts handle. */
const LARGEST = LARGEST_SCRIPT_AMOUNT;

/**
 * Contract tests of the money path's scripts, through their codecs, on real Redis (standalone and
 * the run's Redis Cluster): each script with the boundary amounts (0, 1, 2^53 - 1), missing and
 * malformed records, and what it answered (decoded) next to the keys it wrote. No legal value makes
 * a script error (a Lua negated zero formats as "-0", which HINCRBY refused), and amounts come
 * back exact (an integer reply of 2^53 - 1 reaches ioredis as 2^53).
 */
describe.each(TEST_REDIS_MODES)('the money scripts on %s Redis', (mode) => {
  let redis: RedisClient;
  let target: RedisConfig;
  let prefix: string;
  let n = 0;

  beforeAll(async () => {
    prefix = uniqueName('tgtest');
    target = testRedisTarget(mode, prefix);
    redis = testRedisClient(target);
  });

  afterAll(async () => {
    await redis.quit();
    await deleteRedisKeys(target, prefix);
  });

  const run = <I, O>(codec: ScriptCodec<I, O>, input: I) => runScript(redis, codec, input);

  /** One organisation's keys (one cluster slot), fresh per case, its budget counter seeded at spent 0. */
  async function org(spent = 0n) {
    const orgId = `o${++n}`;
    const key = (...parts: string[]) => orgKeyOf(prefix, orgId, ...parts);
    const k = {
      orgId,
      epoch: key('epoch'),
      r: key('budget-resv'),
      z: key('budget-resv', 'deadlines'),
      h: key('budget', 'b1', '0'),
      bitmap: key('completion', 'x', '0'),
      outbox: key('usage'),
      rl: key('rl', 'r1'),
    };
    await redis.set(k.epoch, 'e');
    await redis.hset(k.h, 'spent', spent.toString(), 'reserved', 0);
    return k;
  }
  type Keys = Awaited<ReturnType<typeof org>>;

  async function counter(h: string) {
    const v = await redis.hmget(h, 'spent', 'reserved', 'leased');
    return v.map((x) => BigInt(x ?? '0'));
  }

  function admit(k: Keys, id: string, amount: bigint, now: number, limit = LARGEST, hard = true) {
    return run(ADMIT_AND_RESERVE, {
      epochKey: k.epoch,
      rateLimits: null,
      budgets: {
        keys: [k.r, k.z, k.h],
        args: [now, id, now + 1000, amount.toString(), limit.toString(), hard ? '1' : '0'],
      },
    });
  }

  let bit = 0;
  function complete(k: Keys, over: Partial<CompleteCallsInput>) {
    return run(COMPLETE_CALLS, {
      bitmapKey: k.bitmap,
      bit: ++bit,
      outboxKey: k.outbox,
      epochKey: k.epoch,
      settlements: [],
      conversions: [],
      events: [],
      ...over,
    });
  }
  const settle = (k: Keys, callId: string, actual: bigint) =>
    complete(k, {
      settlements: [{ callId, budgetKeys: [k.r, k.z, k.h], slotKeys: [], actual }],
      events: [['event', callId]],
    });

  function grant(k: Keys, id: string, want: bigint, over: Partial<LeaseGrantInput> = {}, limit = LARGEST, hard = true) {
    return run(LEASE_GRANT, {
      rKey: k.r,
      zKey: k.z,
      epochKey: k.epoch,
      now: 1_000,
      deadline: 5_000,
      share: 1,
      budgets: [{ id, counterKey: k.h, want, minGrant: 0n, limit, hard }],
      windows: [],
      slots: [],
      ...over,
    });
  }
  const convert = (k: Keys, id: string, amount: bigint) =>
    complete(k, { outboxKey: null, conversions: [{ rKey: k.r, leases: [{ id, counterKey: k.h, amount }] }] });
  const release = (k: Keys, id: string, amount: bigint) =>
    run(LEASE_RELEASE, { rKey: k.r, zKey: k.z, budgets: [{ id, counterKey: k.h, amount }], windows: [], slots: [] });

  describe('admit-and-reserve', () => {
    for (const amount of [0n, 1n, LARGEST]) {
      it(`should reserve, settle and sweep a call of ${amount} micro-units without a script error`, async () => {
        const k = await org();
        expect(await admit(k, 'c1', amount, 1_000)).toEqual({
          kind: 'budget',
          answer: { kind: 'reserved', counters: [{ spent: 0n, reserved: amount, leased: 0n }] },
        });
        expect(await redis.hget(k.r, 'c1')).toBe(`${amount}|${k.h}`);
        expect(await redis.zscore(k.z, 'c1')).toBe('2000');
        expect(await settle(k, 'c1', amount)).toEqual({ kind: 'applied', epochLost: false, conversions: [] });
        expect(await counter(k.h)).toEqual([amount, 0n, 0n]);
        expect(await redis.hlen(k.r)).toBe(0);
        expect(await redis.xlen(k.outbox)).toBe(1);

        // An edge died holding c2: the next admission, after c2's deadline, sweeps it.
        await redis.hset(k.h, 'spent', 0);
        await admit(k, 'c2', amount, 2_000);
        expect(await admit(k, 'c3', 0n, 10_000)).toMatchObject({ answer: { kind: 'reserved' } });
        expect(await counter(k.h)).toEqual([0n, 0n, 0n]);
        expect(await redis.zrange(k.z, '0', '-1')).toEqual(['c3']);
      });
    }

    it('should answer the counters exactly at 2^53 - 1 and refuse one micro-unit over a hard limit there', async () => {
      const k = await org(LARGEST);
      expect(await admit(k, 'zero', 0n, 1_000)).toEqual({
        kind: 'budget',
        answer: { kind: 'reserved', counters: [{ spent: LARGEST, reserved: 0n, leased: 0n }] },
      });
      expect(await admit(k, 'one', 1n, 1_000)).toEqual({
        kind: 'budget',
        answer: { kind: 'short', index: 0, counter: { spent: LARGEST, reserved: 0n, leased: 0n } },
      });
      expect(await redis.hexists(k.r, 'one')).toBe(0);
    });

    it("should answer a soft budget's counters exactly once they pass 2^53", async () => {
      const k = await org();
      await admit(k, 'a', LARGEST, 1_000, 10n, false);
      expect(await admit(k, 'b', LARGEST, 1_000, 10n, false)).toEqual({
        kind: 'budget',
        answer: { kind: 'reserved', counters: [{ spent: 0n, reserved: 2n * LARGEST, leased: 0n }] },
      });
      await settle(k, 'a', LARGEST);
      await settle(k, 'b', LARGEST);
      expect(await counter(k.h)).toEqual([2n * LARGEST, 0n, 0n]);
    });

    it('should refuse a hard budget at exactly one micro-unit over and admit at exactly its limit', async () => {
      const k = await org();
      expect(await admit(k, 'a', 10n, 1_000, 10n)).toMatchObject({ answer: { kind: 'reserved' } });
      expect(await admit(k, 'b', 1n, 1_000, 10n)).toMatchObject({ answer: { kind: 'short', index: 0 } });
      expect(await admit(k, 'c', 0n, 1_000, 10n)).toMatchObject({ answer: { kind: 'reserved' } });
      expect(await admit(k, 'd', 5n, 1_000, 10n, false)).toMatchObject({ answer: { kind: 'reserved' } });
      expect(await counter(k.h)).toEqual([0n, 15n, 0n]);
    });

    it('should answer a missing counter and the lost epoch having written nothing', async () => {
      const k = await org();
      await redis.del(k.h);
      expect(await admit(k, 'c1', 5n, 1_000)).toEqual({ kind: 'budget', answer: { kind: 'no-counter', index: 0 } });
      await redis.del(k.epoch);
      expect(await admit(k, 'c2', 5n, 1_000)).toEqual({ kind: 'epoch-lost' });
      expect(await redis.exists(k.r, k.z, k.h)).toBe(0);
    });

    for (const [field, value] of [
      ['spent', 'abc'],
      ['reserved', '1.5'],
      ['leased', ''],
    ] as const) {
      it(`should answer a counter whose ${field} is ${JSON.stringify(value)} as corrupt, having written nothing, and grant no lease on it`, async () => {
        const k = await org();
        await redis.hset(k.h, field, value);
        const before = await redis.hgetall(k.h);
        expect(await admit(k, 'c1', 5n, 1_000)).toEqual({
          kind: 'budget',
          answer: { kind: 'corrupt-counter', index: 0 },
        });
        expect(await grant(k, 'L:e:1', 10n)).toMatchObject({
          kind: 'granted',
          budgets: [{ kind: 'counter', granted: 0n }],
        });
        expect(await redis.hgetall(k.h)).toEqual(before);
        expect(await redis.exists(k.r, k.z)).toBe(0);
      });
    }

    it('should answer a rate-limit refusal with the rule, and count and reserve nothing for it', async () => {
      const k = await org();
      const rateLimits = (id: string) => ({
        keys: [`${k.rl}:w:1`, `${k.rl}:w:0`, `${k.rl}:c`],
        args: [60_500, id, 61_500, 1, 60_000, 60_000, 0],
      });
      const budgets = (id: string) => ({
        keys: [k.r, k.z, k.h],
        args: [60_500, id, 61_500, '3', LARGEST.toString(), '1'],
      });
      expect(
        await run(ADMIT_AND_RESERVE, { epochKey: k.epoch, rateLimits: rateLimits('a'), budgets: budgets('a') }),
      ).toMatchObject({ kind: 'budget', answer: { kind: 'reserved' } });
      expect(
        await run(ADMIT_AND_RESERVE, { epochKey: k.epoch, rateLimits: rateLimits('b'), budgets: budgets('b') }),
      ).toEqual({ kind: 'rate-limited', refusal: { index: 0, kind: 'WINDOW', retryAfterMs: 59_500 + 60_000 } });
      expect(await redis.get(`${k.rl}:w:1`)).toBe('1');
      expect(await counter(k.h)).toEqual([0n, 3n, 0n]);
    });

    it('should sweep past malformed reservation and lease records, moving them aside, and still admit', async () => {
      const k = await org();
      const foreign = `${orgKeyOf(prefix, 'another-org')}:budget:b1:0`;
      await redis.hset(k.r, 'bad-amount', `abc|${k.h}`, 'foreign', `5|${foreign}`, 'L:x:1', k.h, 'L:x:1#', 'nope');
      await redis.zadd(k.z, 100, 'bad-amount', 100, 'foreign', 100, 'L:x:1');
      await redis.hset(k.h, 'reserved', 7);
      expect(await admit(k, 'after', 3n, 1_000)).toEqual({
        kind: 'budget',
        answer: { kind: 'reserved', counters: [{ spent: 0n, reserved: 10n, leased: 0n }] },
      });
      expect(await counter(k.h)).toEqual([0n, 10n, 0n]); // nothing released for records that could not be read
      expect(await redis.hgetall(`${k.r}:malformed`)).toEqual({
        'bad-amount': `abc|${k.h}`,
        foreign: `5|${foreign}`,
        'L:x:1': `${k.h}#nope`,
      });
      expect(await redis.zrange(k.z, '0', '-1')).toEqual(['after']);
    });

    it('should refuse to encode an amount beyond what Lua holds exactly', () => {
      expect(() =>
        COMPLETE_CALLS.encode({
          bitmapKey: 'b',
          bit: 1,
          outboxKey: null,
          epochKey: 'e',
          settlements: [{ callId: 'c', budgetKeys: [], slotKeys: [], actual: LARGEST + 1n }],
          conversions: [],
          events: [],
        }),
      ).toThrow(RangeError);
    });
  });

  describe('complete-calls', () => {
    it('should apply a resent script once and answer it as already run', async () => {
      const k = await org();
      await admit(k, 'c1', 5n, 1_000);
      const input = {
        bit: 7,
        settlements: [{ callId: 'c1', budgetKeys: [k.r, k.z, k.h], slotKeys: [], actual: 4n }],
        events: [['event', 'c1']] as [string, string][],
      };
      expect(await complete(k, input)).toEqual({ kind: 'applied', epochLost: false, conversions: [] });
      expect(await complete(k, input)).toEqual({ kind: 'already-run' });
      expect(await counter(k.h)).toEqual([4n, 0n, 0n]);
      expect(await redis.xlen(k.outbox)).toBe(1);
      expect(await redis.getbit(k.bitmap, 7)).toBe(1);
    });

    it('should still write the events and settle existing counters when the epoch is gone', async () => {
      const k = await org();
      await admit(k, 'c1', 5n, 1_000);
      await redis.del(k.epoch);
      expect(await settle(k, 'c1', 5n)).toEqual({ kind: 'applied', epochLost: true, conversions: [] });
      expect(await counter(k.h)).toEqual([5n, 0n, 0n]);
      expect(await redis.xlen(k.outbox)).toBe(1);
    });

    it('should settle a reservation the sweep already took and one whose record is malformed', async () => {
      const k = await org();
      await redis.hset(k.r, 'bad', `x|${k.h}`);
      expect(await settle(k, 'gone', 3n)).toMatchObject({ kind: 'applied' });
      expect(await settle(k, 'bad', 2n)).toMatchObject({ kind: 'applied' });
      expect(await counter(k.h)).toEqual([5n, 0n, 0n]);
      expect(await redis.hgetall(`${k.r}:malformed`)).toEqual({ bad: `x|${k.h}` });
      expect(await redis.hlen(k.r)).toBe(0);
    });

    it('should refuse a completion that meets a corrupt counter before writing anything', async () => {
      const k = await org();
      await admit(k, 'c1', 5n, 1_000);
      await redis.hset(k.h, 'spent', 'not-a-number');
      await expect(settle(k, 'c1', 5n)).rejects.toThrow(/TG_COMPLETION_REFUSED counter/);
      expect(await redis.xlen(k.outbox)).toBe(0);
      expect(await redis.exists(k.bitmap)).toBe(0);
      expect(await redis.hget(k.r, 'c1')).not.toBeNull();
    });

    it("should keep one organisation's failed completion from touching another's completed in the same turn", async () => {
      const [a, b] = [await org(), await org()];
      const completion = new CallCompletion(
        redis,
        prefix,
        () => undefined,
        () => undefined,
      );
      await admit(a, 'a1', 5n, 1_000);
      await admit(b, 'b1', 5n, 1_000);
      await redis.hset(a.h, 'reserved', 'corrupt');
      const work = (k: Keys, callId: string) => ({
        orgId: k.orgId,
        callId,
        settlement: { budgetKeys: [k.r, k.z, k.h], slotKeys: [], actual: 5n },
        conversions: [],
        usage: { stream: k.outbox, fields: ['e', callId] as [string, string] },
      });
      const [ra, rb] = await Promise.allSettled([
        completion.complete(work(a, 'a1')),
        completion.complete(work(b, 'b1')),
      ]);
      expect(ra.status).toBe('rejected');
      expect((ra as PromiseRejectedResult).reason).toBeInstanceOf(AdmissionException);
      expect(String((ra as PromiseRejectedResult).reason.message)).not.toMatch(/TG_|ERR|script/);
      expect(rb.status).toBe('fulfilled');
      expect(await counter(b.h)).toEqual([5n, 0n, 0n]);
      expect(await redis.xlen(b.outbox)).toBe(1);
      expect(await redis.xlen(a.outbox)).toBe(0);
      expect(await redis.hget(a.h, 'spent')).toBe('0');
    });
  });

  describe('extend-hold', () => {
    type Shape = 'a reservation and slots' | 'slots alone' | 'a reservation alone';
    const reserves = (shape: Shape) => shape !== 'slots alone';
    const slotted = (shape: Shape) => shape !== 'a reservation alone';

    /** Concurrency rules on two sets (at most one call in the first), as rl_check takes them. */
    function rules(k: Keys, id: string, now: number, sets: 1 | 2) {
      const keys = [`${k.rl}:a:w0`, `${k.rl}:a:w1`, `${k.rl}:a:c`, `${k.rl}:b:w0`, `${k.rl}:b:w1`, `${k.rl}:b:c`];
      const args = [now, id, now + 1000, 0, 60_000, 0, 1, 0, 60_000, 0, 5];
      return { keys: keys.slice(0, 3 * sets), args: args.slice(0, 3 + 4 * sets) };
    }
    const sets = (k: Keys) => [`${k.rl}:a:c`, `${k.rl}:b:c`];

    /** A call of `shape` admitted at `now` (its deadline 1 s on): slots in both sets, a reservation of 5. */
    async function hold(k: Keys, shape: Shape, id: string, now: number) {
      const res = await run(ADMIT_AND_RESERVE, {
        epochKey: k.epoch,
        rateLimits: slotted(shape) ? rules(k, id, now, 2) : null,
        budgets: reserves(shape)
          ? { keys: [k.r, k.z, k.h], args: [now, id, now + 1000, '5', LARGEST.toString(), '1'] }
          : null,
      });
      expect(res).toMatchObject({ kind: 'budget', answer: { kind: 'reserved' } });
    }
    const extend = (k: Keys, shape: Shape, id: string, deadline: number, now: number) =>
      run(EXTEND_HOLD, {
        callId: id,
        recordKeys: reserves(shape) ? [k.r, k.z] : null,
        slotKeys: slotted(shape) ? sets(k) : [],
        deadline,
        now,
      });
    /** The hold's deadlines where Redis keeps them (null where it is gone). */
    const deadlines = async (k: Keys, shape: Shape, id: string) =>
      Promise.all([
        ...(reserves(shape) ? [redis.zscore(k.z, id)] : []),
        ...(slotted(shape) ? sets(k).map((set) => redis.zscore(set, id)) : []),
      ]);

    it("should keep a task's slot when calls admitted after it, and leases renewed on its set, hold theirs shorter", async () => {
      const k = await org();
      const [, set] = sets(k);
      await hold(k, 'slots alone', 'task', 1_000);
      expect(await extend(k, 'slots alone', 'task', 3_601_000, 1_000)).toBe(true);
      // A call on the second set only (its deadline 1 s on), then a lease renewed there for 1 s.
      const call = await run(ADMIT_AND_RESERVE, {
        epochKey: k.epoch,
        rateLimits: { keys: [`${k.rl}:b:w0`, `${k.rl}:b:w1`, set], args: [1_500, 'c2', 2_500, 0, 60_000, 0, 5] },
        budgets: null,
      });
      expect(call).toMatchObject({ kind: 'budget', answer: { kind: 'reserved' } });
      await run(LEASE_RENEW, {
        rKey: k.r,
        zKey: k.z,
        epochKey: k.epoch,
        now: 1_500,
        deadline: 2_500,
        budgetLeaseIds: [],
        slots: [{ key: set, members: ['c2'] }],
      });
      expect(await redis.pttl(set)).toBeGreaterThan(3_500_000);
      expect(await redis.zscore(set, 'task')).toBe('3601000');
    });

    for (const shape of ['a reservation and slots', 'slots alone', 'a reservation alone'] as const) {
      it(`should renew a hold of ${shape} whole, and answer it gone, writing nothing, once the sweep took any part`, async () => {
        const k = await org();
        await hold(k, shape, 'c1', 1_000);
        expect(await extend(k, shape, 'c1', 9_000, 1_500)).toBe(true);
        expect(new Set(await deadlines(k, shape, 'c1'))).toEqual(new Set(['9000']));
        if (slotted(shape)) for (const set of sets(k)) expect(await redis.pttl(set)).toBeGreaterThan(7_000);
        // A later deadline (a task's) is kept.
        expect(await extend(k, shape, 'c1', 5_000, 1_500)).toBe(true);
        expect(new Set(await deadlines(k, shape, 'c1'))).toEqual(new Set(['9000']));

        // Past its deadline, another call sweeps part of it: the slot of the first set (which holds
        // one call) when it holds slots, else its reservation. The rest is still there.
        const sweeper = await run(ADMIT_AND_RESERVE, {
          epochKey: k.epoch,
          rateLimits: slotted(shape) ? rules(k, 'c2', 10_000, 1) : null,
          budgets: slotted(shape)
            ? null
            : { keys: [k.r, k.z, k.h], args: [10_000, 'c2', 11_000, '1', LARGEST.toString(), '1'] },
        });
        expect(sweeper).toMatchObject({ kind: 'budget', answer: { kind: 'reserved' } });
        const left = await deadlines(k, shape, 'c1');
        expect(left).toContain(null);
        expect(await extend(k, shape, 'c1', 20_000, 10_500)).toBe(false);
        expect(await deadlines(k, shape, 'c1')).toEqual(left);
      });

      it(`should answer a settled hold of ${shape} gone`, async () => {
        const k = await org();
        await hold(k, shape, 'c1', 1_000);
        await complete(k, {
          settlements: [
            {
              callId: 'c1',
              budgetKeys: reserves(shape) ? [k.r, k.z, k.h] : [],
              slotKeys: slotted(shape) ? sets(k) : [],
              actual: 5n,
            },
          ],
        });
        expect(await extend(k, shape, 'c1', 9_000, 1_500)).toBe(false);
        expect(await deadlines(k, shape, 'c1')).toEqual(
          reserves(shape) && slotted(shape) ? [null, null, null] : slotted(shape) ? [null, null] : [null],
        );
      });
    }
  });

  describe('the lease scripts', () => {
    for (const amount of [0n, 1n, LARGEST]) {
      it(`should grant, convert, renew and return a lease of ${amount} micro-units, answering amounts exactly`, async () => {
        const k = await org();
        const granted = await grant(k, 'L:e:1', amount);
        expect(granted).toEqual({
          kind: 'granted',
          budgets: [{ kind: 'counter', granted: amount, counter: { spent: 0n, reserved: 0n, leased: amount } }],
          windows: [],
          slots: [],
        });
        expect(await counter(k.h)).toEqual([0n, 0n, amount]);
        // A lease of 0 is no lease: nothing is recorded, so there is nothing to renew.
        expect(await redis.hgetall(k.r)).toEqual(amount > 0n ? { 'L:e:1': k.h, 'L:e:1#': amount.toString() } : {});

        const renewed = await run(LEASE_RENEW, {
          rKey: k.r,
          zKey: k.z,
          epochKey: k.epoch,
          now: 2_000,
          deadline: 6_000,
          budgetLeaseIds: ['L:e:1'],
          slots: [],
        });
        expect(renewed).toEqual({ kind: 'renewed', budgets: [amount > 0n], slots: [] });

        // Calls under it cost 0 (a free call), then everything it holds.
        expect(await convert(k, 'L:e:1', 0n)).toEqual({
          kind: 'applied',
          epochLost: false,
          conversions: [{ lease: amount > 0n ? 'live' : 'swept', spent: 0n, leased: amount }],
        });
        expect(await convert(k, 'L:e:1', amount)).toEqual({
          kind: 'applied',
          epochLost: false,
          conversions: [{ lease: amount > 0n ? 'live' : 'swept', spent: amount, leased: 0n }],
        });
        expect(await counter(k.h)).toEqual([amount, 0n, 0n]);

        for (const back of [0n, amount, 1n]) expect(await release(k, 'L:e:1', back)).toEqual({ budgetsReturned: [0n] });
        expect(await counter(k.h)).toEqual([amount, 0n, 0n]);
        expect(await redis.hlen(k.r)).toBe(0);
      });
    }

    it('should grant a soft budget what it asks past its limit, and a hard one at most what is left', async () => {
      const soft = await org(LARGEST - 1n);
      expect(await grant(soft, 'L:s:1', LARGEST, {}, 10n, false)).toMatchObject({
        budgets: [{ granted: LARGEST, counter: { spent: LARGEST - 1n, leased: LARGEST } }],
      });
      // A counter's leases stay within 2^53 - 1 in all, so every lease amount stays exact in Lua.
      expect(await grant(soft, 'L:s:2', 5n, {}, 10n, false)).toMatchObject({ budgets: [{ granted: 0n }] });
      await release(soft, 'L:s:1', 2n);
      expect(await grant(soft, 'L:s:2', 5n, {}, 10n, false)).toMatchObject({
        budgets: [{ granted: 2n, counter: { leased: LARGEST } }],
      });
      const hard = await org(LARGEST - 3n);
      expect(await grant(hard, 'L:h:1', 10n)).toMatchObject({
        budgets: [{ granted: 3n, counter: { spent: LARGEST - 3n, leased: 3n } }],
      });
      expect(await grant(hard, 'L:h:2', 10n)).toMatchObject({ budgets: [{ granted: 0n }] });
      expect(await redis.hexists(hard.r, 'L:h:2')).toBe(0);
    });

    it('should answer a missing counter, and the lost epoch having written nothing', async () => {
      const k = await org();
      await redis.del(k.h);
      expect(await grant(k, 'L:e:1', 5n)).toEqual({
        kind: 'granted',
        budgets: [{ kind: 'no-counter' }],
        windows: [],
        slots: [],
      });
      await redis.del(k.epoch);
      expect(await grant(k, 'L:e:2', 5n)).toEqual({ kind: 'epoch-lost' });
      expect(
        await run(LEASE_RENEW, {
          rKey: k.r,
          zKey: k.z,
          epochKey: k.epoch,
          now: 1,
          deadline: 2,
          budgetLeaseIds: ['L:e:1'],
          slots: [],
        }),
      ).toEqual({ kind: 'epoch-lost' });
      expect(await redis.exists(k.r, k.z, k.h)).toBe(0);
    });

    it('should grant window calls and concurrency slots, renew the slots and give both back', async () => {
      const k = await org();
      const [cur, prev, conc] = [`${k.rl}:w:0`, `${k.rl}:w:-1`, `${k.rl}:c`];
      const granted = await grant(k, 'unused', 0n, {
        budgets: [],
        windows: [{ key: cur, prevKey: prev, limit: 10, windowMs: 60_000, windowStart: 0, want: 4, minGrant: 1 }],
        slots: [{ key: conc, max: 3, want: 5, minGrant: 1, memberPrefix: 'L:e:', firstMember: 1 }],
      });
      expect(granted).toEqual({ kind: 'granted', budgets: [], windows: [4], slots: [3] });
      expect(await redis.get(cur)).toBe('4');
      expect(await redis.zrange(conc, '0', '-1')).toEqual(['L:e:1', 'L:e:2', 'L:e:3']);
      expect(
        await run(LEASE_RENEW, {
          rKey: k.r,
          zKey: k.z,
          epochKey: k.epoch,
          now: 2_000,
          deadline: 9_000,
          budgetLeaseIds: [],
          slots: [{ key: conc, members: ['L:e:1', 'L:e:2', 'L:e:3', 'L:e:4'] }],
        }),
      ).toEqual({ kind: 'renewed', budgets: [], slots: [false] }); // L:e:4 was never granted
      expect(await redis.zscore(conc, 'L:e:1')).toBe('9000');
      expect(
        await run(LEASE_RELEASE, {
          rKey: k.r,
          zKey: k.z,
          budgets: [],
          windows: [{ key: cur, calls: 3 }],
          slots: [{ key: conc, members: ['L:e:1', 'L:e:2'] }],
        }),
      ).toEqual({ budgetsReturned: [] });
      expect(await redis.get(cur)).toBe('1');
      expect(await redis.zrange(conc, '0', '-1')).toEqual(['L:e:3']);
    });

    it('should give back part of a lease, then nothing, then the rest, answering what went back', async () => {
      const k = await org();
      await grant(k, 'L:e:2', 10n, {}, 100n);
      expect(await counter(k.h)).toEqual([0n, 0n, 10n]);
      const back = [];
      for (const amount of [3n, 0n, 8n]) back.push(...(await release(k, 'L:e:2', amount)).budgetsReturned);
      expect(back).toEqual([3n, 0n, 7n]);
      expect(await counter(k.h)).toEqual([0n, 0n, 0n]);
      expect(await redis.hlen(k.r)).toBe(0);
    });

    it('should answer a conversion under a swept lease as swept (still charged) and under a lost counter as lost', async () => {
      const k = await org();
      await grant(k, 'L:e:3', 10n);
      await redis.hdel(k.r, 'L:e:3', 'L:e:3#'); // the sweep took it
      await redis.hset(k.h, 'leased', 0);
      expect(await convert(k, 'L:e:3', 4n)).toMatchObject({ conversions: [{ lease: 'swept', spent: 4n, leased: 0n }] });
      await grant(k, 'L:e:4', 10n);
      await redis.del(k.h);
      expect(await convert(k, 'L:e:4', 4n)).toMatchObject({
        conversions: [{ lease: 'counter-lost', spent: 0n, leased: 0n }],
      });
      expect(await redis.exists(k.h)).toBe(0); // not re-created: the next reservation seeds it from the ledger
    });
  });
});
