import { Processor } from '@nestjs/bullmq';
import { JobName, JobOf, QueueName, LoggedWorkerHost } from '@tollgate/queue';
import { BudgetReconcileService, ReconcileReport } from '@tollgate/reporting';
import { Job, UnrecoverableError } from 'bullmq';

/**
 * Checks budget counters against the ledger plus the usage outbox (one org on request, all on the
 * schedule), rebuilds missing ones and repairs drifted ones (the schedule always repairs; a
 * request says whether to).
 */
@Processor(QueueName.BudgetReconcile)
export class BudgetReconcileProcessor extends LoggedWorkerHost {
  constructor(private readonly reconcile: BudgetReconcileService) {
    super();
  }

  async process(job: Job<JobOf<JobName.ReconcileBudgets>>): Promise<ReconcileReport[]> {
    if (job.name !== JobName.ReconcileBudgets)
      throw new UnrecoverableError(`unknown job ${job.name} on ${QueueName.BudgetReconcile}`);
    // Repairs are audited under the job that made them.
    const opts = { repair: job.data.repair ?? true, actor: `system:budget-reconcile:${job.id}` };
    return job.data.orgId
      ? [await this.reconcile.reconcileOrg(job.data.orgId, opts)]
      : this.reconcile.reconcileAll(opts);
  }
}
