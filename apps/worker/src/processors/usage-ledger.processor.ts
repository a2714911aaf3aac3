import { Processor, WorkerHost } from '@nestjs/bullmq';
import { Inject, Logger, OnModuleInit } from '@nestjs/common';
import { TOLLGATE_CONFIG, WorkerConfig } from '@tollgate/config';
import { LedgerService, parseUsageBatch } from '@tollgate/metering';
import { JobName, QueueName } from '@tollgate/queue';
import { FinanceJobs } from '@tollgate/reporting';
import { Job, UnrecoverableError } from 'bullmq';
import { LedgerBatcher } from './ledger-batcher';

/**
 * Legacy: drains `record-usage` jobs that edges from before the usage outbox queued, so an upgrade
 * loses none of them. Edges no longer add these jobs (usage events go to the outbox stream,
 * drained by `UsageLedgerConsumer`); remove this processor, `LedgerBatcher` and the queue once
 * every deployment has run a worker of this version with an empty `usage-ledger` queue.
 *
 * Writes each job's batch of usage events to the ledger, merging concurrently running jobs into
 * one INSERT; the event id makes a repeated delivery a no-op.
 */
@Processor(QueueName.UsageLedger)
export class UsageLedgerProcessor extends WorkerHost implements OnModuleInit {
  private readonly logger = new Logger(UsageLedgerProcessor.name);
  private readonly batcher: LedgerBatcher;

  constructor(
    ledger: LedgerService,
    jobs: FinanceJobs,
    @Inject(TOLLGATE_CONFIG) private readonly config: WorkerConfig,
  ) {
    super();
    this.batcher = new LedgerBatcher(async (events) => {
      const written = await ledger.writeUsageEvents(events);
      // New spend may have crossed a budget threshold: check the orgs of this batch now, not in
      // 30 s. Not awaited: the ledger write is the job; a lost check is caught by the schedule,
      // and awaiting a queue that shuts down first would hold the job (and shutdown) forever.
      for (const orgId of new Set(events.map((e) => e.orgId))) {
        jobs.requestAlertCheck(orgId).catch((err: Error) => this.logger.warn(`alert check for org ${orgId} not queued: ${err.message}`));
      }
      return written;
    }, config.worker.ledgerBatchSize);
  }

  onModuleInit(): void {
    // Many jobs in flight at once is what lets the batcher fill a batch.
    this.worker.concurrency = Math.min(this.config.worker.ledgerBatchSize, 256);
  }

  async process(job: Job<unknown>): Promise<void> {
    if (job.name !== JobName.RecordUsage) throw this.discard(job, `unknown job ${job.name} on ${QueueName.UsageLedger}`);
    const { events, problems } = parseUsageBatch(job.data);
    // The valid events are written even when others are not: retrying cannot repair a payload.
    if (events.length > 0) await this.batcher.add(events);
    if (problems.length > 0) throw this.discard(job, problems.slice(0, 5).join('; ') + (problems.length > 5 ? `; and ${problems.length - 5} more` : ''));
  }

  private discard(job: Job, why: string): UnrecoverableError {
    this.logger.error(`discarding job ${job.id} (${job.name}): ${why}`);
    return new UnrecoverableError(why);
  }
}
