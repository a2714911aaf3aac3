import { describe, expect, it } from 'vitest';
import { fieldChanges } from './audit-changes';

describe('audit before and after', () => {
  it('should read from/to details as they are', () => {
    expect(fieldChanges('team.updated', { name: { from: 'web', to: 'frontend' } }, undefined)).toEqual([
      { field: 'name', before: 'web', after: 'frontend' },
    ]);
  });

  it('should compare a state row with the previous row of the same target, listing only what differs', () => {
    const previous = { id: 'b1', limitMicros: 10_000_000, mode: 'HARD', alertThresholds: [80, 100], version: 1 };
    const now = { id: 'b1', limitMicros: 25_000_000, mode: 'HARD', alertThresholds: [80, 100], version: 2 };
    expect(fieldChanges('budget.updated', now, previous)).toEqual([
      { field: 'limitMicros', before: 10_000_000, after: 25_000_000 },
    ]);
  });

  it('should take the after side of a previous from/to row, and leave unknown what no row recorded', () => {
    const previous = { name: { from: 'a', to: 'b' } };
    expect(fieldChanges('key.settings', { name: 'b', tags: ['x'] }, previous)).toEqual([
      { field: 'tags', after: ['x'] },
    ]);
  });

  it('should show a creation as new values and a deletion as removed ones', () => {
    expect(fieldChanges('budget.created', { id: 'b', limitMicros: 5 }, { limitMicros: 1 })).toEqual([
      { field: 'limitMicros', before: null, after: 5 },
    ]);
    expect(fieldChanges('budget.deleted', { period: 'MONTH', limitMicros: 5 }, { limitMicros: 5 })).toEqual([
      { field: 'period', before: 'MONTH', after: null },
      { field: 'limitMicros', before: 5, after: null },
    ]);
    expect(fieldChanges('key.revoked', null, null)).toEqual([]);
  });
});
