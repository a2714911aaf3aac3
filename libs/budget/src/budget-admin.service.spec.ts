import { describe, expect, it } from 'vitest';
import { DEFAULT_ALERT_THRESHOLDS, normalizeAlertThresholds } from './budget-admin.service';

describe('normalizeAlertThresholds', () => {
  it('should default to the standard thresholds', () => {
    expect(normalizeAlertThresholds(undefined)).toEqual({ ok: true, value: DEFAULT_ALERT_THRESHOLDS });
  });

  it('should sort and de-duplicate', () => {
    expect(normalizeAlertThresholds([100, 50, 80, 50])).toEqual({ ok: true, value: [50, 80, 100] });
  });

  it('should allow thresholds past 100% for soft budgets', () => {
    expect(normalizeAlertThresholds([100, 150])).toEqual({ ok: true, value: [100, 150] });
  });

  it('should refuse fractions, zero and too many entries', () => {
    expect(normalizeAlertThresholds([50.5]).ok).toBe(false);
    expect(normalizeAlertThresholds([0]).ok).toBe(false);
    expect(normalizeAlertThresholds(Array.from({ length: 11 }, (_, i) => i + 1)).ok).toBe(false);
  });
});
