/**
 * What reporting needs from the budget lib, declared here so this domain lib does not import
 * another: the app binds it to `BudgetService.checkCounters` (type-checked where it is bound).
 */
export interface BudgetCounterReading {
  standing: {
    budgetId: string;
    scope: 'ORG' | 'TEAM' | 'USER' | 'KEY';
    scopeId: string;
    period: 'DAY' | 'WEEK' | 'MONTH' | 'QUARTER' | 'TOTAL';
    mode: 'HARD' | 'SOFT';
    limitMicros: bigint;
    spentMicros: bigint;
    reservedMicros: bigint;
    periodStart: Date;
    resetsAt: Date | null;
  };
  /** The Redis counter's spend, null when the counter is missing. */
  counterSpentMicros: bigint | null;
  ledgerSpentMicros: bigint;
  rebuilt: boolean;
}

export interface BudgetCounters {
  checkCounters(orgId: string, timeZone: string, opts?: { rebuildMissing?: boolean; now?: Date; countersOnly?: boolean }): Promise<BudgetCounterReading[]>;
}

export const BUDGET_COUNTERS = Symbol('BUDGET_COUNTERS');
