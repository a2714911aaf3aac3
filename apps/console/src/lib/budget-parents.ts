import type { BudgetPeriod, BudgetScope } from '../api/governance-types';
import { toMicros } from './money';

/** What a budget needs to be compared with the budgets above it. */
export interface BudgetLimit {
  id?: string;
  scope: BudgetScope;
  scopeId: string;
  period: BudgetPeriod;
  limitMicros: number | string | bigint;
}

/** Where a key sits: its team and its person (a key's budgets have both above them). */
export interface KeyPlace {
  teamId: string;
  userId: string;
}

/**
 * The budgets of the same period above `budget` whose limit is lower: the child can never spend up to its
 * own limit, since every call is also checked against them. Only the same period is comparable (a monthly
 * limit below a daily one says nothing). A user's teams are not known here, so a user budget is compared
 * with the organisation's only; a key's with its person's, its team's and the organisation's.
 */
export function lowerParents(
  budget: BudgetLimit,
  all: readonly BudgetLimit[],
  orgId: string,
  keys: ReadonlyMap<string, KeyPlace>,
): BudgetLimit[] {
  const above: { scope: BudgetScope; scopeId: string }[] = [];
  if (budget.scope !== 'ORG') above.push({ scope: 'ORG', scopeId: orgId });
  if (budget.scope === 'KEY') {
    const key = keys.get(budget.scopeId);
    if (key) above.push({ scope: 'TEAM', scopeId: key.teamId }, { scope: 'USER', scopeId: key.userId });
  }
  const limit = toMicros(budget.limitMicros as number | string | bigint);
  return all.filter(
    (b) =>
      b.id !== budget.id &&
      b.period === budget.period &&
      above.some((a) => a.scope === b.scope && a.scopeId === b.scopeId) &&
      toMicros(b.limitMicros as number | string | bigint) < limit,
  );
}
