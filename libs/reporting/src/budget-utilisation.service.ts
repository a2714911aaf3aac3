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
  /**
   * What the scope is called: the org's or team's name, a person's name (else email), a key's
   * `name (prefix)`; null when it no longer exists. Pages need no list of every key to label a budget.
   */
  scopeName: string | null;
}

/** Each budget's spend for its current period (calendar period in the org's time zone). */
@Injectable()
export class BudgetUtilisationService {
  constructor(
    private readonly prisma: PrismaService,
    @Inject(BUDGET_COUNTERS) private readonly counters: BudgetCounters,
  ) {}

  /**
   * Each budget the scope may see (see visibleBudgetScopes) with its spend; the org's scope sees
   * all of them.
   */
  async budgetUtilisation(orgId: string, scope: ReportScope = ORG_SCOPE): Promise<BudgetUtilisation[]> {
    const timeZone = await orgTimeZone(this.prisma, orgId);
    if (timeZone === null) return [];
    const [readings, visible] = await Promise.all([
      this.counters.checkCounters(orgId, timeZone),
      this.visibleBudgetScopes(orgId, scope),
    ]);
    const shown = readings.filter(({ standing: s }) => budgetVisible(visible, s));
    const names = await this.scopeNames(
      orgId,
      shown.map(({ standing: s }) => s),
    );
    return shown
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
        scopeName: names.get(s.scopeId) ?? null,
      }))
      .sort((a, b) => (b.utilisationBp ?? -1) - (a.utilisationBp ?? -1) || a.budgetId.localeCompare(b.budgetId));
  }

  /** Names of the budgets' scopes, by id: one read per kind of scope, of the ids asked only. */
  private async scopeNames(orgId: string, budgets: { scope: string; scopeId: string }[]): Promise<Map<string, string>> {
    const ids = (scope: string) => [...new Set(budgets.filter((b) => b.scope === scope).map((b) => b.scopeId))];
    const [orgs, teams, users, keys] = await Promise.all([
      ids('ORG').length
        ? this.prisma.organization.findMany({ where: { id: { in: ids('ORG') } }, select: { id: true, name: true } })
        : [],
      ids('TEAM').length
        ? this.prisma.team.findMany({ where: { orgId, id: { in: ids('TEAM') } }, select: { id: true, name: true } })
        : [],
      ids('USER').length
        ? this.prisma.user.findMany({
            where: { orgId, id: { in: ids('USER') } },
            select: { id: true, name: true, email: true },
          })
        : [],
      ids('KEY').length
        ? this.prisma.virtualKey.findMany({
            where: { orgId, id: { in: ids('KEY') } },
            select: { id: true, name: true, prefix: true },
          })
        : [],
    ]);
    return new Map<string, string>([
      ...orgs.map((o) => [o.id, o.name] as [string, string]),
      ...teams.map((t) => [t.id, t.name] as [string, string]),
      ...users.map((u) => [u.id, u.name ?? u.email] as [string, string]),
      ...keys.map((k) => [k.id, `${k.name} (${k.prefix})`] as [string, string]),
    ]);
  }

  /**
   * `SCOPE:id` of the budgets a scope may see, or null for all of them (the org's scope); the one
   * rule for both a budget's limit (GET /budgets) and its spend (GET /reports/budgets).
   *
   * A user's scope: its own USER budget and its own keys' KEY budgets. A team's scope: its TEAM
   * budget and its keys' KEY budgets, but not its members' USER budgets: a USER budget counts that
   * user's calls across the whole org (BudgetService counts it by userId alone), so a member who is
   * also in another team would show the team admin spend outside the team. Neither sees the org's.
   */
  async visibleBudgetScopes(orgId: string, scope: ReportScope): Promise<Set<string> | null> {
    if (scope.kind === 'org') return null;
    const owner = scope.kind === 'user' ? { userId: scope.id } : { teamId: scope.id };
    const keys = await this.prisma.virtualKey.findMany({ where: { orgId, ...owner }, select: { id: true } });
    return new Set([`${scope.kind === 'user' ? 'USER' : 'TEAM'}:${scope.id}`, ...keys.map((k) => `KEY:${k.id}`)]);
  }
}

/** Whether a budget is among `visible` (from visibleBudgetScopes; null is every budget). */
export function budgetVisible(visible: Set<string> | null, budget: { scope: string; scopeId: string }): boolean {
  return visible === null || visible.has(`${budget.scope}:${budget.scopeId}`);
}
