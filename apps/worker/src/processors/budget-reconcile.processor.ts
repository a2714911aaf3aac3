import { Processor, WorkerHost } from '@nestjs/bullmq';
import { JobName, JobOf, QueueName } from '@tollgate/queue';
import { BudgetReconcileService, ReconcileReport } from '@tollgate/reporting';
import { Job, UnrecoverableError } from 'bullmq';

/** Checks budget counters against the ledger (one org on request, all on the schedule) and rebuilds missing ones. */
@Processor(QueueName.BudgetReconcile)
export class BudgetReconcileProcessor extends WorkerHost {
  constructor(private readonly reconcile: BudgetReconcileService) {
    super();
  }

  async process(job: Job<JobOf<JobName.ReconcileBudgets>>): Promise<ReconcileReport[]> {
    if (job.name !== JobName.ReconcileBudgets) throw new UnrecoverableError(`unknown job ${job.name} on ${QueueName.BudgetReconcile}`);
    return job.data.orgId ? [await this.reconcile.reconcileOrg(job.data.orgId)] : this.reconcile.reconcileAll();
  }
}
