import { BudgetStanding } from '@tollgate/budget';
import { Micros, microsToJson } from '@tollgate/kernel';

export const CALL_META_KEY = 'tollgate/call';
export const BUDGET_META_KEY = 'tollgate/budget';

export interface CallMeta {
  callId: string;
  tool: string;
  costMicros: number;
  outputTokens: number;
  latencyMs: number;
}

export function budgetMeta(standings: BudgetStanding[]) {
  const budgets = standings.map((s) => ({
    scope: s.scope,
    period: s.period,
    mode: s.mode,
    limitMicros: microsToJson(s.limitMicros),
    spentMicros: microsToJson(s.spentMicros),
    remainingMicros: microsToJson(s.remainingMicros),
    resetsAt: s.resetsAt?.toISOString() ?? null,
  }));
  const hard = standings.filter((s) => s.mode === 'HARD');
  const remaining: Micros | null =
    hard.length === 0
      ? null
      : hard.reduce((m, s) => (s.remainingMicros < m ? s.remainingMicros : m), hard[0].remainingMicros);
  return { remainingMicros: remaining === null ? null : microsToJson(remaining), budgets };
}
