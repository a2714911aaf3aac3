import { describe, expect, it } from 'vitest';
import { isTypedDay, presetOf, presetRange, previousPeriod } from './date-ranges';

describe('date ranges', () => {
  it('should give each preset its calendar days', () => {
    const today = '2026-11-25';
    expect(presetRange('today', today)).toEqual({ from: today, to: today });
    expect(presetRange('yesterday', today)).toEqual({ from: '2026-11-24', to: '2026-11-24' });
    expect(presetRange('this-month', today)).toEqual({ from: '2026-11-01', to: today });
    expect(presetRange('last-month', today)).toEqual({ from: '2026-10-01', to: '2026-10-31' });
    expect(presetRange('last-7', today)).toEqual({ from: '2026-11-19', to: today });
    expect(presetRange('last-30', today)).toEqual({ from: '2026-10-27', to: today });
    expect(presetRange('quarter-to-date', today)).toEqual({ from: '2026-10-01', to: today });
    expect(presetRange('last-month', '2026-03-01')).toEqual({ from: '2026-02-01', to: '2026-02-28' });
    expect(presetRange('quarter-to-date', '2026-03-31').from).toBe('2026-01-01');
    expect(presetRange('yesterday', '2027-01-01')).toEqual({ from: '2026-12-31', to: '2026-12-31' });
  });

  it('should recognise a preset and compare with the same number of days before', () => {
    expect(presetOf({ from: '2026-11-01', to: '2026-11-25' }, '2026-11-25')).toBe('this-month');
    expect(presetOf({ from: '2026-11-02', to: '2026-11-25' }, '2026-11-25')).toBeNull();
    expect(previousPeriod({ from: '2026-11-01', to: '2026-11-25' })).toEqual({ from: '2026-10-07', to: '2026-10-31' });
    expect(previousPeriod({ from: '2026-11-25', to: '2026-11-25' })).toEqual({ from: '2026-11-24', to: '2026-11-24' });
  });

  it('should never take a half-typed year or an impossible day', () => {
    expect(isTypedDay('0002-10-27')).toBe(false);
    expect(isTypedDay('2026-02-30')).toBe(false);
    expect(isTypedDay('2026-02-28')).toBe(true);
  });
});
