import { UsageEvent } from '@tollgate/metering';
import { describe, expect, it } from 'vitest';
import { LedgerBatcher } from './ledger-batcher';

function events(prefix: string, n: number): UsageEvent[] {
  return Array.from({ length: n }, (_, i) => ({ id: `${prefix}${i}` }) as UsageEvent);
}

function recordingBatcher(maxBatch: number, fail = false) {
  const writes: string[][] = [];
  const batcher = new LedgerBatcher(async (batch) => {
    writes.push(batch.map((e) => e.id));
    if (fail) throw new Error('database unavailable');
    return batch.length;
  }, maxBatch);
  return { batcher, writes };
}

describe('LedgerBatcher', () => {
  it('should write the events of jobs added together in one write', async () => {
    const { batcher, writes } = recordingBatcher(100);
    await Promise.all([batcher.add(events('a', 3)), batcher.add(events('b', 2)), batcher.add(events('c', 1))]);
    expect(writes).toEqual([['a0', 'a1', 'a2', 'b0', 'b1', 'c0']]);
  });

  it('should never split a job across writes nor put more than the cap in a write of several jobs', async () => {
    const { batcher, writes } = recordingBatcher(5);
    await Promise.all([batcher.add(events('a', 3)), batcher.add(events('b', 3)), batcher.add(events('c', 8)), batcher.add(events('d', 2))]);
    expect(writes).toEqual([['a0', 'a1', 'a2'], ['b0', 'b1', 'b2'], events('c', 8).map((e) => e.id), ['d0', 'd1']]);
  });

  it('should reject every job of a write when the write fails', async () => {
    const { batcher } = recordingBatcher(100, true);
    const outcomes = await Promise.allSettled([batcher.add(events('a', 2)), batcher.add(events('b', 1))]);
    expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected']);
  });
});
