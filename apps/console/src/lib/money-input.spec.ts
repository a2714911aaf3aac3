import { describe, expect, it } from 'vitest';
import { decimalToMicros } from './money-input';
import { microsToDecimal } from './money';

describe('decimalToMicros', () => {
  it('reads typed amounts exactly, to the micro-unit', () => {
    expect(decimalToMicros('12.5')).toBe(12_500_000n);
    expect(decimalToMicros(' 0.000125 ')).toBe(125n);
    expect(decimalToMicros('9007199254.740993')).toBe(9_007_199_254_740_993n);
    expect(microsToDecimal(decimalToMicros('0.1')!)).toBe('0.10');
  });

  it('refuses what is not an amount', () => {
    for (const bad of ['', '-1', '1.0000001', '1e3', 'abc', '1,5']) expect(decimalToMicros(bad)).toBeNull();
  });
});
