import { describe, expect, it } from 'vitest';
import { periodWindow } from './budget-period';

describe('budget periods', () => {
  it('should align a day to midnight in the organisation time zone', () => {
    const w = periodWindow('DAY', new Date('2026-03-10T03:00:00Z'), 'America/New_York');
    expect(w.start.toISOString()).toBe('2026-03-09T04:00:00.000Z');
    expect(w.end!.toISOString()).toBe('2026-03-10T04:00:00.000Z');
  });

  it('should make the daylight-saving day 23 hours long', () => {
    const w = periodWindow('DAY', new Date('2026-03-08T12:00:00Z'), 'America/New_York');
    expect(w.end!.getTime() - w.start.getTime()).toBe(23 * 3600 * 1000);
  });

  it('should start weeks on Monday, and months and quarters on their first day', () => {
    expect(periodWindow('WEEK', new Date('2026-11-22T10:00:00Z'), 'UTC').start.toISOString()).toBe(
      '2026-11-16T00:00:00.000Z',
    );
    expect(periodWindow('MONTH', new Date('2026-11-22T10:00:00Z'), 'Europe/Paris').start.toISOString()).toBe(
      '2026-10-31T23:00:00.000Z',
    );
    const q = periodWindow('QUARTER', new Date('2026-11-22T10:00:00Z'), 'UTC');
    expect(q.start.toISOString()).toBe('2026-10-01T00:00:00.000Z');
    expect(q.end!.toISOString()).toBe('2027-01-01T00:00:00.000Z');
  });

  it('should never reset a total budget', () => {
    expect(periodWindow('TOTAL', new Date(), 'UTC')).toEqual({ start: new Date(0), end: null });
  });

  it('should reject an unknown time zone', () => {
    expect(() => periodWindow('DAY', new Date(), 'Mars/Olympus')).toThrow(/time zone/);
  });
});
