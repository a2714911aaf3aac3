import { describe, expect, it } from 'vitest';
import { formatMicros, microsToJson, toMicros } from './money';

describe('money', () => {
  it('should accept integer micro-units as numbers, strings and bigints', () => {
    expect(toMicros(1_500_000)).toBe(1_500_000n);
    expect(toMicros('42')).toBe(42n);
    expect(toMicros(7n)).toBe(7n);
  });

  it('should reject fractions and non-numbers when converting to micro-units', () => {
    expect(() => toMicros(1.5)).toThrow(RangeError);
    expect(() => toMicros('1.5')).toThrow(RangeError);
    expect(() => toMicros('abc')).toThrow(RangeError);
  });

  it('should format micro-units as exact decimals without floating point', () => {
    expect(formatMicros(1_234_567n)).toBe('1.234567');
    expect(formatMicros(5n)).toBe('0.000005');
    expect(formatMicros(-2_000_001n)).toBe('-2.000001');
    // 0.1 + 0.2 in micro-units is exactly 0.3
    expect(formatMicros(100_000n + 200_000n)).toBe('0.300000');
  });

  it('should refuse to put an amount beyond 2^53 into JSON', () => {
    expect(microsToJson(9_007_199_254_740_991n)).toBe(9_007_199_254_740_991);
    expect(() => microsToJson(9_007_199_254_740_993n)).toThrow(RangeError);
  });
});
