import { Inject, Injectable, Logger } from '@nestjs/common';
import { BudgetAlert, PrismaService } from '@tollgate/db';
import { BUDGET_COUNTERS, BudgetCounters } from './budget-counters.port';
import { orgTimeZone, orgsWithBudgets } from './org-directory';
import { crossedThresholds } from './threshold-crossing';

/** A delivery is retried this many times (the job's attempts); after that the alert stays undelivered, with its last error. */
export const MAX_DELIVERY_ATTEMPTS = 8;
// An alert older than this that never went out is history, not news: the sweep leaves it alone.
const REDELIVERY_WINDOW_MS = 24 * 3600 * 1000;
export const MAX_ALERTS_PAGE = 500;

export interface AlertCheckResult {
  orgId: string;
  /** Alerts created by this check (thresholds newly crossed). */
  created: BudgetAlert[];
  /** Alerts still to deliver (new ones, and older ones whose delivery never finished). */
  toDeliver: string[];
}

/**
 * Detects budget thresholds crossed in the current period. Each (budget, period, threshold) gives
 * one alert row: the unique constraint makes a repeated or concurrent check create nothing twice,
 * and a new period (new periodStart) arms every threshold again.
 */
@Injectable()
export class BudgetAlertService {
  private readonly logger = new Logger(BudgetAlertService.name);

  constructor(
    private readonly prisma: PrismaService,
    @Inject(BUDGET_COUNTERS) private readonly counters: BudgetCounters,
  ) {}

  async checkOrg(orgId: string, now = new Date()): Promise<AlertCheckResult> {
    const timeZone = await orgTimeZone(this.prisma, orgId);
    if (timeZone === null) return { orgId, created: [], toDeliver: [] };
    const [standings, budgets] = await Promise.all([
      this.counters.orgStandings(orgId, timeZone, now),
      this.prisma.budget.findMany({ where: { orgId }, select: { id: true, alertThresholds: true } }),
    ]);
    const thresholdsOf = new Map(budgets.map((b) => [b.id, b.alertThresholds]));
    const data = standings.flatMap((s) => {
      // A budget deleted since the counters' cache was filled has no thresholds to cross.
      const thresholds = thresholdsOf.get(s.budgetId);
      if (!thresholds) return [];
      return crossedThresholds(thresholds, s.limitMicros, s.spentMicros).map((threshold) => ({
        orgId,
        budgetId: s.budgetId,
        periodStart: s.periodStart,
        threshold,
        spentMicros: s.spentMicros,
      }));
    });
    const created =
      data.length > 0 ? await this.prisma.budgetAlert.createManyAndReturn({ data, skipDuplicates: true }) : [];
    for (const a of created)
      this.logger.log(
        `budget ${a.budgetId} crossed ${a.threshold}% (spent ${a.spentMicros} micro-units) in org ${orgId}`,
      );
    return { orgId, created, toDeliver: await this.pendingDeliveries(orgId, now) };
  }

  /** Every organisation with budgets (the 30 s schedule). */
  async checkAll(now = new Date()): Promise<AlertCheckResult[]> {
    const out: AlertCheckResult[] = [];
    for (const orgId of await orgsWithBudgets(this.prisma)) out.push(await this.checkOrg(orgId, now));
    return out;
  }

  /** Undelivered alerts with attempts left, for orgs with a webhook; a lost job is re-queued by the next check. */
  private async pendingDeliveries(orgId: string, now: Date): Promise<string[]> {
    if ((await this.prisma.alertWebhook.count({ where: { orgId } })) === 0) return [];
    const rows = await this.prisma.budgetAlert.findMany({
      where: {
        orgId,
        deliveredAt: null,
        attempts: { lt: MAX_DELIVERY_ATTEMPTS },
        createdAt: { gte: new Date(now.getTime() - REDELIVERY_WINDOW_MS) },
      },
      select: { id: true },
      orderBy: { createdAt: 'asc' },
    });
    return rows.map((r) => r.id);
  }

  /** Alert history, latest first. */
  listAlerts(orgId: string, limit: number): Promise<BudgetAlert[]> {
    return this.prisma.budgetAlert.findMany({
      where: { orgId },
      orderBy: [{ createdAt: 'desc' }, { threshold: 'desc' }],
      take: Math.min(limit, MAX_ALERTS_PAGE),
    });
  }
}
