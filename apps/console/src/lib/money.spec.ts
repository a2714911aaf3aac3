import { describe, expect, it } from 'vitest';
import { formatMoney, formatRatio, microsToDecimal, sumMicros, toMicros } from './money';

describe('console money', () => {
  it('should write micro-units as an exact decimal without float rounding', () => {
    expect(microsToDecimal(0)).toBe('0.00');
    expect(microsToDecimal(100_000)).toBe('0.10');
    expect(microsToDecimal(1_234_567)).toBe('1.234567');
    expect(microsToDecimal(-5)).toBe('-0.000005');
    // 0.1 + 0.2 in floats is 0.30000000000000004; in micro-units it is exact.
    expect(microsToDecimal(sumMicros([100_000, 200_000]))).toBe('0.30');
    expect(microsToDecimal('9007199254740993123')).toBe('9007199254740.993123');
  });

  it('should format with the currency code given, keeping every micro-unit', () => {
    expect(formatMoney(1_234_500_000n, 'USD', 'en-US')).toBe('$1,234.50');
    expect(formatMoney(125, 'USD', 'en-US')).toBe('$0.000125');
    expect(formatMoney('9007199254740993123', 'USD', 'en-US')).toBe('$9,007,199,254,740.993123');
    expect(formatMoney(2_500_000, 'EUR', 'en-US')).toBe('€2.50');
  });

  it('should refuse amounts that are not integers', () => {
    expect(() => toMicros(1.5)).toThrow(RangeError);
    expect(() => toMicros('1.5')).toThrow(RangeError);
  });

  it('should give ratios by integer arithmetic', () => {
    expect(formatRatio(1, 8)).toBe('12.5 %');
    expect(formatRatio(1, 3)).toBe('33.3 %');
    expect(formatRatio(0, 0)).toBeNull();
  });
});
