import { Inject, Injectable } from '@nestjs/common';
import { PrismaService } from '@tollgate/db';
import { BUDGET_COUNTERS, BudgetCounterReading, BudgetCounters } from './budget-counters.port';
import { orgTimeZone } from './org-directory';
import { utilisationBasisPoints } from './threshold-crossing';

export interface BudgetUtilisation {
  budgetId: string;
  scope: BudgetCounterReading['standing']['scope'];
  scopeId: string;
  period: BudgetCounterReading['standing']['period'];
  mode: 'HARD' | 'SOFT';
  limitMicros: bigint;
  spentMicros: bigint;
  reservedMicros: bigint;
  leasedMicros: bigint;
  /** spent / limit in basis points (10000 = 100 %), rounded down; null for a zero limit. */
  utilisationBp: number | null;
  periodStart: Date;
  resetsAt: Date | null;
  /** Where `spent` came from: the live Redis counter, or the ledger when the counter is missing. */
  source: 'counter' | 'ledger';
}

/** Each budget's spend for its current period (calendar period in the org's time zone). */
@Injectable()
export class BudgetUtilisationService {
  constructor(
    private readonly prisma: PrismaService,
    @Inject(BUDGET_COUNTERS) private readonly counters: BudgetCounters,
  ) {}

  async budgetUtilisation(orgId: string): Promise<BudgetUtilisation[]> {
    const timeZone = await orgTimeZone(this.prisma, orgId);
    if (timeZone === null) return [];
    const readings = await this.counters.checkCounters(orgId, timeZone);
    return readings
      .map(({ standing: s, counterSpentMicros }) => ({
        budgetId: s.budgetId,
        scope: s.scope,
        scopeId: s.scopeId,
        period: s.period,
        mode: s.mode,
        limitMicros: s.limitMicros,
        spentMicros: s.spentMicros,
        reservedMicros: s.reservedMicros,
        leasedMicros: s.leasedMicros,
        utilisationBp: utilisationBasisPoints(s.limitMicros, s.spentMicros),
        periodStart: s.periodStart,
        resetsAt: s.resetsAt,
        source: counterSpentMicros === null ? ('ledger' as const) : ('counter' as const),
      }))
      .sort((a, b) => (b.utilisationBp ?? -1) - (a.utilisationBp ?? -1) || a.budgetId.localeCompare(b.budgetId));
  }
}
