import { Inject, Injectable } from '@nestjs/common';
import { PrismaService } from '@tollgate/db';
import { BUDGET_COUNTERS, BudgetCounterReading, BudgetCounters } from './budget-counters.port';
import { orgTimeZone } from './org-directory';
import { ORG_SCOPE, ReportScope } from './spend-report';
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

  /**
   * A team's scope sees its team's budget, its members' user budgets and its keys' budgets; a
   * user's scope its own user budget and its own keys' budgets; neither sees the org's budget.
   */
  async budgetUtilisation(orgId: string, scope: ReportScope = ORG_SCOPE): Promise<BudgetUtilisation[]> {
    const timeZone = await orgTimeZone(this.prisma, orgId);
    if (timeZone === null) return [];
    const [readings, visible] = await Promise.all([
      this.counters.checkCounters(orgId, timeZone),
      this.visibleScopes(orgId, scope),
    ]);
    return readings
      .filter(({ standing: s }) => visible === null || visible.has(`${s.scope}:${s.scopeId}`))
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

  /** `SCOPE:id` of the budgets a scope may see, or null for all of them (the org's scope). */
  private async visibleScopes(orgId: string, scope: ReportScope): Promise<Set<string> | null> {
    if (scope.kind === 'org') return null;
    if (scope.kind === 'user') {
      const keys = await this.prisma.virtualKey.findMany({ where: { orgId, userId: scope.id }, select: { id: true } });
      return new Set([`USER:${scope.id}`, ...keys.map((k) => `KEY:${k.id}`)]);
    }
    const [members, keys] = await Promise.all([
      this.prisma.teamMember.findMany({ where: { orgId, teamId: scope.id }, select: { userId: true } }),
      this.prisma.virtualKey.findMany({ where: { orgId, teamId: scope.id }, select: { id: true } }),
    ]);
    return new Set([`TEAM:${scope.id}`, ...members.map((m) => `USER:${m.userId}`), ...keys.map((k) => `KEY:${k.id}`)]);
  }
}
