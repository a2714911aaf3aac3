import { describe, expect, it } from 'vitest';
import { MAX_PRICE_MICROS, validatePriceRule } from './price-book.service';

const NOW = new Date('2030-06-01T12:00:00Z');

describe('validatePriceRule', () => {
  it('should accept a plain per-call rule', () => {
    expect(validatePriceRule({ perCallMicros: 2000n }, NOW)).toBeNull();
    expect(
      validatePriceRule(
        { perCallMicros: 0n, toolPattern: 'search_*', effectiveFrom: new Date('2030-07-01T00:00:00Z') },
        NOW,
      ),
    ).toBeNull();
  });

  it('should refuse negative or absurd amounts, naming the field', () => {
    expect(validatePriceRule({ perCallMicros: -1n }, NOW)).toMatchObject({ field: 'perCallMicros' });
    expect(validatePriceRule({ perCallMicros: 1n, perOutputTokenMicros: MAX_PRICE_MICROS + 1n }, NOW)).toMatchObject({
      field: 'perOutputTokenMicros',
    });
  });

  it('should refuse a pattern with a namespace or spaces', () => {
    expect(validatePriceRule({ perCallMicros: 1n, toolPattern: 'github:search' }, NOW)).toMatchObject({
      field: 'toolPattern',
    });
    expect(validatePriceRule({ perCallMicros: 1n, toolPattern: 'a b' }, NOW)).toMatchObject({ field: 'toolPattern' });
  });

  it('should accept completion and subscription patterns, and refuse one with nothing after its kind', () => {
    expect(validatePriceRule({ perCallMicros: 1n, toolPattern: 'completion:*' }, NOW)).toBeNull();
    expect(validatePriceRule({ perCallMicros: 1n, toolPattern: 'subscription:file:///logs/*' }, NOW)).toBeNull();
    expect(validatePriceRule({ perCallMicros: 1n, toolPattern: 'completion:' }, NOW)).toMatchObject({
      field: 'toolPattern',
    });
  });

  it('should refuse an effective date in the past, beyond clock skew', () => {
    expect(
      validatePriceRule({ perCallMicros: 1n, effectiveFrom: new Date(NOW.getTime() - 3_600_000) }, NOW),
    ).toMatchObject({ field: 'effectiveFrom' });
    expect(validatePriceRule({ perCallMicros: 1n, effectiveFrom: new Date(NOW.getTime() - 5_000) }, NOW)).toBeNull();
  });

  it('should require a cap when reported costs are accepted', () => {
    expect(validatePriceRule({ perCallMicros: 1n, acceptReportedCost: true }, NOW)).toMatchObject({
      field: 'reportedCostCapMicros',
    });
    expect(
      validatePriceRule({ perCallMicros: 1n, acceptReportedCost: true, reportedCostCapMicros: 500n }, NOW),
    ).toBeNull();
  });
});
