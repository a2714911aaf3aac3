import { describe, expect, it } from 'vitest';
import { type BudgetLimit, lowerParents } from './budget-parents';

const ORG = 'org';
const KEYS = new Map([['k1', { teamId: 't1', userId: 'u1' }]]);
const b = (id: string, scope: BudgetLimit['scope'], scopeId: string, limit: number, period = 'MONTH'): BudgetLimit => ({
  id,
  scope,
  scopeId,
  period: period as BudgetLimit['period'],
  limitMicros: limit,
});

describe('a child budget above its parent', () => {
  const all = [
    b('org-m', 'ORG', ORG, 100),
    b('org-d', 'ORG', ORG, 5, 'DAY'),
    b('team-m', 'TEAM', 't1', 50),
    b('other-team', 'TEAM', 't2', 1),
    b('user-m', 'USER', 'u1', 60),
  ];

  it('should name the same-period budgets above with a lower limit, and nothing at or below', () => {
    expect(lowerParents(b('key', 'KEY', 'k1', 55), all, ORG, KEYS).map((p) => p.id)).toEqual(['team-m']);
    expect(lowerParents(b('key', 'KEY', 'k1', 70), all, ORG, KEYS).map((p) => p.id)).toEqual(['team-m', 'user-m']);
    expect(lowerParents(b('key', 'KEY', 'k1', 50), all, ORG, KEYS)).toEqual([]); // equal is fine
    expect(lowerParents(b('team', 'TEAM', 't1', 101), all, ORG, KEYS).map((p) => p.id)).toEqual(['org-m']);
    expect(lowerParents(b('org-m', 'ORG', ORG, 1_000), all, ORG, KEYS)).toEqual([]);
  });

  it('should compare exact micro-units beyond 2^53 and only within one period', () => {
    const big = [b('org', 'ORG', ORG, 0), { ...b('org2', 'ORG', ORG, 0, 'WEEK'), limitMicros: '9007199254740993' }];
    expect(
      lowerParents({ ...b('t', 'TEAM', 't1', 0, 'WEEK'), limitMicros: '9007199254740994' }, big, ORG, KEYS),
    ).toHaveLength(1);
    expect(
      lowerParents({ ...b('t', 'TEAM', 't1', 0, 'WEEK'), limitMicros: '9007199254740993' }, big, ORG, KEYS),
    ).toHaveLength(0);
  });
});
