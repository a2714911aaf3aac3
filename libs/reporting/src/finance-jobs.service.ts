import { InjectQueue } from '@nestjs/bullmq';
import { Inject, Injectable } from '@nestjs/common';
import { AuditedBy, recordAudited } from '@tollgate/audit';
import { PrismaService } from '@tollgate/db';
import { BaseConfig, TOLLGATE_CONFIG } from '@tollgate/config';
import { JOB_QUEUE, JobName, JobOf, QueueName, jobOptions } from '@tollgate/queue';
import type { Job, JobsOptions, Queue } from 'bullmq';
import { parseUtcDay } from './report-dates';
import { ReportingException, ReportingExceptionCode } from './reporting.exception';

export type FinanceJobName =
  | JobName.RollupUsage
  | JobName.RebuildUsageRollups
  | JobName.CheckBudgetAlerts
  | JobName.DeliverBudgetAlert
  | JobName.ReconcileBudgets;

/** A requested rebuild, as its audit row records it. */
export interface RollupRebuildRequest {
  jobId: string;
  day: string | null;
}

/** How often the scheduled finance jobs run. */
export const FINANCE_SCHEDULES = {
  rollupEveryMs: 10 * 60_000,
  alertsEveryMs: 30_000,
  reconcileEveryMs: 5 * 60_000,
} as const;

/** The finance job schedulers' ids, by queue (the worker checks they exist). */
export const FINANCE_SCHEDULER_IDS = {
  rollup: 'usage-rollup-recent',
  alerts: 'budget-alerts-all',
  reconcile: 'budget-reconcile-all',
} as const;
export const FINANCE_SCHEDULERS: [QueueName, string][] = [
  [QueueName.UsageRollup, FINANCE_SCHEDULER_IDS.rollup],
  [QueueName.BudgetAlerts, FINANCE_SCHEDULER_IDS.alerts],
  [QueueName.BudgetReconcile, FINANCE_SCHEDULER_IDS.reconcile],
];

/** Producer for the finance queues (rollups, alerts, deliveries, reconciliation); payload types follow the job name. */
/** How long a requested alert check waits, gathering the spend of the ledger batches behind it. */
export const ALERT_CHECK_COALESCE_MS = 1_000;

@Injectable()
export class FinanceJobs {
  private readonly queues: Record<FinanceJobName, Queue>;
  private readonly options: Record<JobName, JobsOptions>;

  constructor(
    private readonly prisma: PrismaService,
    @Inject(TOLLGATE_CONFIG) config: BaseConfig,
    @InjectQueue(QueueName.UsageRollup) rollup: Queue,
    @InjectQueue(QueueName.BudgetAlerts) alerts: Queue,
    @InjectQueue(QueueName.AlertDelivery) delivery: Queue,
    @InjectQueue(QueueName.BudgetReconcile) reconcile: Queue,
  ) {
    const byQueue: Partial<Record<QueueName, Queue>> = {
      [QueueName.UsageRollup]: rollup,
      [QueueName.BudgetAlerts]: alerts,
      [QueueName.AlertDelivery]: delivery,
      [QueueName.BudgetReconcile]: reconcile,
    };
    const pick = (n: FinanceJobName) => byQueue[JOB_QUEUE[n]]!;
    this.queues = {
      [JobName.RollupUsage]: pick(JobName.RollupUsage),
      [JobName.RebuildUsageRollups]: pick(JobName.RebuildUsageRollups),
      [JobName.CheckBudgetAlerts]: pick(JobName.CheckBudgetAlerts),
      [JobName.DeliverBudgetAlert]: pick(JobName.DeliverBudgetAlert),
      [JobName.ReconcileBudgets]: pick(JobName.ReconcileBudgets),
    };
    this.options = jobOptions(config.jobs);
  }

  async enqueue<N extends FinanceJobName>(
    name: N,
    payload: JobOf<N>,
    opts: Pick<JobsOptions, 'jobId' | 'deduplication' | 'delay'>,
  ): Promise<Job> {
    return this.queues[name].add(name, payload, { ...this.options[name], ...opts });
  }

  /**
   * A reconciliation with repair of one organisation, asked for by an edge that found a corrupt
   * counter: at most one waiting per organisation, however many edges and calls ask.
   */
  async requestCounterRebuild(orgId: string): Promise<void> {
    await this.enqueue(
      JobName.ReconcileBudgets,
      { orgId, repair: true },
      { deduplication: { id: `counter-rebuild-${orgId}` } },
    );
  }

  /**
   * A repair: the worker rebuilds the org's rollups from the ledger, those of `day` (YYYY-MM-DD: the
   * org's local day in the report rollups, the UTC day in UsageDailyRollup) or all of them (null),
   * with the one rebuild the upkeep runs after a zone change (`tollgate_rebuild_usage_rollups`).
   * The audit row's transaction commits only once the job is queued, so no row names a job never
   * queued; a queued job whose row then failed to commit rebuilds what was already right.
   */
  async requestRollupRebuild(
    orgId: string,
    day: string | null,
    audit: AuditedBy<RollupRebuildRequest>,
  ): Promise<RollupRebuildRequest> {
    if (day !== null && !parseUtcDay(day))
      throw new ReportingException(ReportingExceptionCode.InvalidQuery, 'day must be a real date YYYY-MM-DD', 'day');
    const request = { jobId: `rebuild-rollups-${orgId}-${day ?? 'all'}-${Date.now()}`, day };
    await this.prisma.$transaction(async (tx) => {
      await recordAudited(tx, audit, request);
      await this.enqueue(JobName.RebuildUsageRollups, { orgId, day }, { jobId: request.jobId });
    });
    return request;
  }

  /**
   * A budget-alert check for an org within a second: at most one waiting per org (and one
   * running), and each waits ALERT_CHECK_COALESCE_MS, so under steady traffic an org is checked
   * about once a second instead of back to back after every ledger batch.
   */
  async requestAlertCheck(orgId: string): Promise<void> {
    await this.enqueue(
      JobName.CheckBudgetAlerts,
      { orgId },
      { deduplication: { id: `alerts-${orgId}`, keepLastIfActive: true }, delay: ALERT_CHECK_COALESCE_MS },
    );
  }

  /** One delivery job per alert; the id makes a repeated request a no-op while the job exists. */
  async requestDelivery(orgId: string, alertId: string): Promise<void> {
    await this.enqueue(JobName.DeliverBudgetAlert, { orgId, alertId }, { jobId: `deliver-${alertId}` });
  }

  async requestReconcile(orgId: string): Promise<string> {
    const job = await this.enqueue(JobName.ReconcileBudgets, { orgId }, { jobId: `reconcile-${orgId}-${Date.now()}` });
    return job.id!;
  }

  /** The repeating jobs (idempotent upserts: one scheduler each, whatever the number of workers). */
  async scheduleRecurring(): Promise<void> {
    await this.queues[JobName.RollupUsage].upsertJobScheduler(
      FINANCE_SCHEDULER_IDS.rollup,
      { every: FINANCE_SCHEDULES.rollupEveryMs },
      { name: JobName.RollupUsage, data: { orgId: null }, opts: this.options[JobName.RollupUsage] },
    );
    await this.queues[JobName.CheckBudgetAlerts].upsertJobScheduler(
      FINANCE_SCHEDULER_IDS.alerts,
      { every: FINANCE_SCHEDULES.alertsEveryMs },
      { name: JobName.CheckBudgetAlerts, data: { orgId: null }, opts: this.options[JobName.CheckBudgetAlerts] },
    );
    await this.queues[JobName.ReconcileBudgets].upsertJobScheduler(
      FINANCE_SCHEDULER_IDS.reconcile,
      { every: FINANCE_SCHEDULES.reconcileEveryMs },
      { name: JobName.ReconcileBudgets, data: { orgId: null }, opts: this.options[JobName.ReconcileBudgets] },
    );
  }
}
