import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseWithBigInts, stringifyWithBigInts } from './task-store.service';

describe('task settlement codec', () => {
  it('should keep every amount in micro-units and every date exact when a task record is read back', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(2n ** 80n), max: 2n ** 80n }), fc.date({ noInvalidDate: true }), (amount, at) => {
        const back = parseWithBigInts<{ amount: bigint; at: Date; nested: { n: bigint[] } }>(
          stringifyWithBigInts({ amount, at, nested: { n: [amount, 0n] } }),
        );
        expect(back.amount).toBe(amount);
        expect(back.at.getTime()).toBe(at.getTime());
        expect(back.nested.n).toEqual([amount, 0n]);
      }),
    );
  });
});
