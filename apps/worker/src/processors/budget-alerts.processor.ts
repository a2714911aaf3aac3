import { Processor } from '@nestjs/bullmq';
import { JobName, JobOf, QueueName, LoggedWorkerHost } from '@tollgate/queue';
import { BudgetAlertService, FinanceJobs } from '@tollgate/reporting';
import { Job, UnrecoverableError } from 'bullmq';

/** Finds newly crossed budget thresholds (one org after a ledger batch, or all on the schedule) and queues their delivery. */
@Processor(QueueName.BudgetAlerts)
export class BudgetAlertsProcessor extends LoggedWorkerHost {
  constructor(
    private readonly alerts: BudgetAlertService,
    private readonly jobs: FinanceJobs,
  ) {
    super();
  }

  async process(job: Job<JobOf<JobName.CheckBudgetAlerts>>): Promise<{ created: number; queued: number }> {
    if (job.name !== JobName.CheckBudgetAlerts)
      throw new UnrecoverableError(`unknown job ${job.name} on ${QueueName.BudgetAlerts}`);
    const results = job.data.orgId ? [await this.alerts.checkOrg(job.data.orgId)] : await this.alerts.checkAll();
    let created = 0;
    let queued = 0;
    for (const r of results) {
      created += r.created.length;
      for (const alertId of r.toDeliver) {
        await this.jobs.requestDelivery(r.orgId, alertId);
        queued++;
      }
    }
    return { created, queued };
  }
}
