import { Processor, WorkerHost } from '@nestjs/bullmq';
import { JobName, JobOf, QueueName } from '@tollgate/queue';
import { ReportingException, UsageRollupService, todayAndYesterday } from '@tollgate/reporting';
import { Job, UnrecoverableError } from 'bullmq';

/** Recomputes daily rollups from the ledger: the given UTC day, or today and yesterday on the schedule. */
@Processor(QueueName.UsageRollup)
export class UsageRollupProcessor extends WorkerHost {
  constructor(private readonly rollups: UsageRollupService) {
    super();
  }

  async process(job: Job<JobOf<JobName.RollupUsage>>): Promise<{ days: string[]; rows: number }> {
    if (job.name !== JobName.RollupUsage)
      throw new UnrecoverableError(`unknown job ${job.name} on ${QueueName.UsageRollup}`);
    // Yesterday too: events of late evening arrive after midnight when the ledger lags.
    const days = job.data.day ? [job.data.day] : todayAndYesterday(new Date());
    let rows = 0;
    try {
      for (const day of days) rows += await this.rollups.rollupDay(day, job.data.orgId);
    } catch (err) {
      // A malformed day will be malformed on every retry.
      if (err instanceof ReportingException) throw new UnrecoverableError(err.message);
      throw err;
    }
    return { days, rows };
  }
}
