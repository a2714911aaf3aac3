import { Inject, Injectable, Logger } from '@nestjs/common';
import { PrismaService } from '@tollgate/db';
import { RedisService } from '@tollgate/redis';
import { BUDGET_COUNTERS, BudgetCounterReading, BudgetCounters } from './budget-counters.port';
import { orgTimeZone, orgsWithBudgets } from './org-directory';

/** One budget's counter against the ledger; money as decimal strings of micro-units (exact in JSON). */
export interface BudgetDrift {
  budgetId: string;
  scope: BudgetCounterReading['standing']['scope'];
  scopeId: string;
  period: BudgetCounterReading['standing']['period'];
  periodStart: string;
  counterSpentMicros: string | null;
  ledgerSpentMicros: string;
  /** counter - ledger: positive while settled calls wait for the ledger writer, or when a counter was tampered with. */
  driftMicros: string;
}

export interface ReconcileReport {
  orgId: string;
  ranAt: string;
  budgetsChecked: number;
  /** Budgets whose counter differs from the ledger. */
  drift: BudgetDrift[];
  /** Budgets whose counter was missing and has been rebuilt from the ledger. */
  rebuilt: BudgetDrift[];
}

const LAST_REPORT_TTL_SECONDS = 7 * 24 * 3600;

/**
 * Checks each budget's Redis counter for its current period against the ledger: reports drift
 * (it does not overwrite a counter, since settled calls reach the ledger a moment later than the
 * counter) and rebuilds a missing counter from the ledger. The last report is kept in Redis.
 */
@Injectable()
export class BudgetReconcileService {
  private readonly logger = new Logger(BudgetReconcileService.name);

  constructor(
    private readonly prisma: PrismaService,
    private readonly redis: RedisService,
    @Inject(BUDGET_COUNTERS) private readonly counters: BudgetCounters,
  ) {}

  async reconcileOrg(orgId: string, now = new Date()): Promise<ReconcileReport> {
    const timeZone = await orgTimeZone(this.prisma, orgId);
    const readings = timeZone === null ? [] : await this.counters.checkCounters(orgId, timeZone, { rebuildMissing: true, now });
    const row = (r: BudgetCounterReading): BudgetDrift => ({
      budgetId: r.standing.budgetId,
      scope: r.standing.scope,
      scopeId: r.standing.scopeId,
      period: r.standing.period,
      periodStart: r.standing.periodStart.toISOString(),
      counterSpentMicros: r.counterSpentMicros === null ? null : r.counterSpentMicros.toString(),
      ledgerSpentMicros: r.ledgerSpentMicros.toString(),
      driftMicros: r.counterSpentMicros === null ? '0' : (r.counterSpentMicros - r.ledgerSpentMicros).toString(),
    });
    const report: ReconcileReport = {
      orgId,
      ranAt: now.toISOString(),
      budgetsChecked: readings.length,
      drift: readings.filter((r) => r.counterSpentMicros !== null && r.counterSpentMicros !== r.ledgerSpentMicros).map(row),
      rebuilt: readings.filter((r) => r.rebuilt).map(row),
    };
    for (const d of report.drift) {
      this.logger.warn(`budget drift org=${orgId} budget=${d.budgetId} scope=${d.scope} period=${d.period} counter=${d.counterSpentMicros} ledger=${d.ledgerSpentMicros} drift=${d.driftMicros}`);
    }
    for (const d of report.rebuilt) this.logger.log(`budget counter rebuilt org=${orgId} budget=${d.budgetId} from ledger=${d.ledgerSpentMicros}`);
    await this.redis.client.set(this.lastReportKey(orgId), JSON.stringify(report), 'EX', LAST_REPORT_TTL_SECONDS);
    return report;
  }

  async reconcileAll(now = new Date()): Promise<ReconcileReport[]> {
    const out: ReconcileReport[] = [];
    for (const orgId of await orgsWithBudgets(this.prisma)) out.push(await this.reconcileOrg(orgId, now));
    return out;
  }

  /** The last reconciliation of an org, or null if none ran in the past week. */
  async lastReport(orgId: string): Promise<ReconcileReport | null> {
    const raw = await this.redis.client.get(this.lastReportKey(orgId));
    return raw ? (JSON.parse(raw) as ReconcileReport) : null;
  }

  private lastReportKey(orgId: string): string {
    return this.redis.orgKey(orgId, 'reconcile', 'last');
  }
}
