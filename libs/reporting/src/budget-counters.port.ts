/**
 * What reporting needs from the budget lib, declared here so this domain lib does not import
 * another: the app binds it to `BudgetService` (type-checked where it is bound).
 */
export interface BudgetStandingReading {
  budgetId: string;
  scope: 'ORG' | 'TEAM' | 'USER' | 'KEY';
  scopeId: string;
  period: 'DAY' | 'WEEK' | 'MONTH' | 'QUARTER' | 'TOTAL';
  mode: 'HARD' | 'SOFT';
  limitMicros: bigint;
  spentMicros: bigint;
  reservedMicros: bigint;
  leasedMicros: bigint;
  periodStart: Date;
  resetsAt: Date | null;
}

export interface BudgetCounterReading {
  standing: BudgetStandingReading;
  /** The Redis counter's spend, null when the counter is missing. */
  counterSpentMicros: bigint | null;
  ledgerSpentMicros: bigint;
  rebuilt: boolean;
  /** The counter held a field that is not an integer (as found); with rebuildMissing it was dropped and rebuilt. */
  corrupt?: { spent: string; reserved: string; leased: string };
}

export interface BudgetCounters {
  /** Counters beside the ledger's sums (reconciliation, utilisation). */
  checkCounters(
    orgId: string,
    timeZone: string,
    opts?: { rebuildMissing?: boolean; now?: Date },
  ): Promise<BudgetCounterReading[]>;
  /** Standings from the counters alone, the ledger only where a counter is missing (alert checks). */
  orgStandings(orgId: string, timeZone: string, now?: Date): Promise<BudgetStandingReading[]>;
}

export const BUDGET_COUNTERS = Symbol('BUDGET_COUNTERS');
