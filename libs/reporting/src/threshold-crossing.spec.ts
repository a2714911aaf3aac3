import { describe, expect, it } from 'vitest';
import { crossedThresholds, utilisationBasisPoints } from './threshold-crossing';

describe('threshold crossing', () => {
  it('should cross a threshold exactly at the limit share, not a micro-unit before', () => {
    expect(crossedThresholds([50, 100], 1_000_000n, 499_999n)).toEqual([]);
    expect(crossedThresholds([50, 100], 1_000_000n, 500_000n)).toEqual([50]);
    expect(crossedThresholds([100, 50], 1_000_000n, 1_000_000n)).toEqual([50, 100]);
  });

  it('should report every threshold passed when spend jumps over several at once', () => {
    expect(crossedThresholds([50, 80, 100, 150], 10n, 16n)).toEqual([50, 80, 100, 150]);
  });

  it('should cross nothing when nothing is spent, even with a zero limit', () => {
    expect(crossedThresholds([50], 0n, 0n)).toEqual([]);
    expect(crossedThresholds([50], 0n, 1n)).toEqual([50]);
  });

  it('should give utilisation in whole basis points rounded down', () => {
    expect(utilisationBasisPoints(3_000_000n, 1_000_000n)).toBe(3333);
    expect(utilisationBasisPoints(1_000_000n, 1_500_000n)).toBe(15000);
    expect(utilisationBasisPoints(0n, 5n)).toBeNull();
  });
});
