import { Processor } from '@nestjs/bullmq';
import { Logger } from '@nestjs/common';
import { parseUsageBatch } from '@tollgate/metering';
import { JobName, QueueName, LoggedWorkerHost } from '@tollgate/queue';
import { Job, UnrecoverableError } from 'bullmq';
import { LedgerWriter } from './ledger-writer.service';

/**
 * Legacy: drains `record-usage` jobs that edges from before the usage outbox queued, so an upgrade
 * loses none of them. Edges no longer add these jobs (usage events go to the outbox stream,
 * drained by `UsageLedgerConsumer`); remove this processor and the queue once every deployment has
 * run a worker of this version with an empty `usage-ledger` queue. Each job's events are written as
 * they come; the event id makes a repeated delivery a no-op.
 */
@Processor(QueueName.UsageLedger)
export class UsageLedgerProcessor extends LoggedWorkerHost {
  private readonly logger = new Logger(UsageLedgerProcessor.name);

  constructor(private readonly ledger: LedgerWriter) {
    super();
  }

  async process(job: Job<unknown>): Promise<void> {
    if (job.name !== JobName.RecordUsage)
      throw this.discard(job, `unknown job ${job.name} on ${QueueName.UsageLedger}`);
    const { events, problems } = parseUsageBatch(job.data);
    // The valid events are written even when others are not: retrying cannot repair a payload.
    await this.ledger.write(events);
    if (problems.length > 0)
      throw this.discard(
        job,
        problems.slice(0, 5).join('; ') + (problems.length > 5 ? `; and ${problems.length - 5} more` : ''),
      );
  }

  private discard(job: Job, why: string): UnrecoverableError {
    this.logger.error(`discarding job ${job.id} (${job.name}): ${why}`);
    return new UnrecoverableError(why);
  }
}
