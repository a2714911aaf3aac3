import { describe, expect, it } from 'vitest';
import { addDays, dayIn, daysBetween, monthStart } from './dates';
import { forecastBudget } from './forecast';

describe('budget forecast', () => {
  const periodStart = '2026-11-01T00:00:00Z';
  const resetsAt = '2026-12-01T00:00:00Z';

  it('should project the day the budget runs out at the rate so far', () => {
    // 10 days in, 40 % spent: 15 more days at that rate.
    const f = forecastBudget({
      limitMicros: 100_000_000,
      spentMicros: 40_000_000,
      periodStart,
      resetsAt,
      now: new Date('2026-11-11T00:00:00Z'),
    });
    expect(f).toEqual({ kind: 'runs-out', at: new Date('2026-11-26T00:00:00Z') });
  });

  it('should say the budget lasts when the projection is past the reset', () => {
    const f = forecastBudget({
      limitMicros: 100_000_000,
      spentMicros: 10_000_000,
      periodStart,
      resetsAt,
      now: new Date('2026-11-11T00:00:00Z'),
    });
    expect(f).toEqual({ kind: 'lasts', resetsAt: new Date(resetsAt) });
  });

  it('should name exhausted and untouched budgets', () => {
    expect(forecastBudget({ limitMicros: 5, spentMicros: 5, periodStart, resetsAt }).kind).toBe('exhausted');
    expect(forecastBudget({ limitMicros: 5, spentMicros: 0, periodStart, resetsAt }).kind).toBe('no-spend');
  });

  it('should keep precision on budgets beyond 2^53 micro-units', () => {
    const f = forecastBudget({
      limitMicros: '20000000000000000000',
      spentMicros: '10000000000000000000',
      periodStart,
      resetsAt: null,
      now: new Date('2026-11-02T00:00:00Z'),
    });
    expect(f).toEqual({ kind: 'runs-out', at: new Date('2026-11-03T00:00:00Z') });
  });
});

describe('org days', () => {
  it('should take the calendar day in the org time zone', () => {
    const at = new Date('2026-11-23T23:30:00Z');
    expect(dayIn('UTC', at)).toBe('2026-11-23');
    expect(dayIn('Europe/Paris', at)).toBe('2026-11-24');
    expect(dayIn('America/Los_Angeles', at)).toBe('2026-11-23');
  });

  it('should do calendar arithmetic on days', () => {
    expect(addDays('2026-02-28', 1)).toBe('2026-03-01');
    expect(monthStart('2026-11-23')).toBe('2026-11-01');
    expect(daysBetween('2026-11-29', '2026-12-02')).toEqual(['2026-11-29', '2026-11-30', '2026-12-01', '2026-12-02']);
  });
});
