import { Processor, WorkerHost } from '@nestjs/bullmq';
import { Inject, OnModuleInit } from '@nestjs/common';
import { TOLLGATE_CONFIG, WorkerConfig } from '@tollgate/config';
import { LedgerService, fromPayload } from '@tollgate/metering';
import { JobName, JobOf, QueueName } from '@tollgate/queue';
import { FinanceJobs } from '@tollgate/reporting';
import { Job, UnrecoverableError } from 'bullmq';
import { LedgerBatcher } from './ledger-batcher';

/** Writes usage events to the ledger in batches; the event id makes a repeated delivery a no-op. */
@Processor(QueueName.UsageLedger)
export class UsageLedgerProcessor extends WorkerHost implements OnModuleInit {
  private readonly batcher: LedgerBatcher;

  constructor(
    ledger: LedgerService,
    jobs: FinanceJobs,
    @Inject(TOLLGATE_CONFIG) private readonly config: WorkerConfig,
  ) {
    super();
    this.batcher = new LedgerBatcher(async (events) => {
      const written = await ledger.writeUsageEvents(events);
      // New spend may have crossed a budget threshold: check the orgs of this batch now, not in 30 s.
      await Promise.all([...new Set(events.map((e) => e.orgId))].map((orgId) => jobs.requestAlertCheck(orgId)));
      return written;
    }, config.worker.ledgerBatchSize);
  }

  onModuleInit(): void {
    // Many jobs in flight at once is what lets the batcher fill a batch.
    this.worker.concurrency = Math.min(this.config.worker.ledgerBatchSize, 256);
  }

  async process(job: Job<JobOf<JobName.RecordUsage>>): Promise<void> {
    if (job.name !== JobName.RecordUsage) throw new UnrecoverableError(`unknown job ${job.name} on ${QueueName.UsageLedger}`);
    await this.batcher.add(fromPayload(job.data));
  }
}
