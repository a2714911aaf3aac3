import { describe, expect, it } from 'vitest';
import { budgetClock, currentZoneOf, periodWindow } from './budget-period';

describe('budgetClock', () => {
  // Changed from UTC to Tokyo (UTC+9) at 2026-11-24 10:00Z, in the middle of the UTC day.
  const changedAt = new Date('2026-11-24T10:00:00Z');
  const clock = budgetClock('Asia/Tokyo', 'UTC', changedAt);

  it('should keep the running period of the previous zone when the zone has just changed', () => {
    expect(periodWindow('DAY', new Date('2026-11-24T20:00:00Z'), clock)).toEqual({
      start: new Date('2026-11-24T00:00:00Z'),
      end: new Date('2026-11-25T00:00:00Z'),
    });
    expect(periodWindow('MONTH', new Date('2026-11-28T00:00:00Z'), clock).start).toEqual(
      new Date('2026-11-01T00:00:00Z'),
    );
  });

  it('should start the next period where the running one ended and end it on the new zone’s calendar', () => {
    // Tokyo's 25 November runs from 24 Nov 15:00Z; the first period after the change starts at 25 Nov 00:00Z.
    expect(periodWindow('DAY', new Date('2026-11-25T01:00:00Z'), clock)).toEqual({
      start: new Date('2026-11-25T00:00:00Z'),
      end: new Date('2026-11-25T15:00:00Z'),
    });
    expect(periodWindow('DAY', new Date('2026-11-26T01:00:00Z'), clock)).toEqual({
      start: new Date('2026-11-25T15:00:00Z'),
      end: new Date('2026-11-26T15:00:00Z'),
    });
  });

  it('should be the zone itself without a change, and name the current zone', () => {
    expect(budgetClock('Europe/Paris', null, null)).toBe('Europe/Paris');
    expect(budgetClock('UTC', 'UTC', changedAt)).toBe('UTC');
    expect(currentZoneOf(clock)).toBe('Asia/Tokyo');
    expect(currentZoneOf('UTC')).toBe('UTC');
  });
});
