import { Inject, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { Processor } from '@nestjs/bullmq';
import { TOLLGATE_CONFIG, WorkerConfig } from '@tollgate/config';
import { LedgerPartitionsService, TrailRetentionService } from '@tollgate/metering';
import { JobName, JobOf, QueueName, LoggedWorkerHost } from '@tollgate/queue';
import { ReportingException, UsageRollupService } from '@tollgate/reporting';
import { Job, UnrecoverableError } from 'bullmq';

export interface UsageRollupResult {
  days: string[];
  rows: number;
  /** The ledger partitions that exist for this month and the months ahead. */
  partitions: string[];
  /** Months retention dropped (YYYY-MM-01). */
  dropped: string[];
  /** Orgs whose report rollups were rebuilt in their current zone. */
  rebuilt: string[];
  /** Trail steps older than their org's retention, deleted. */
  trailDeleted: number;
}

/**
 * The ledger's upkeep, every 10 minutes: partitions for this month and LEDGER_PARTITIONS_AHEAD
 * months after it, retention (LEDGER_RETENTION_MONTHS), and report rollups rebuilt for orgs whose
 * zone changed, and agents' trails past their org's retention deleted. None of it reads the ledger (the rollups are kept by the ledger's insert trigger),
 * except a month retention drops and a rebuild. On admin request, one UTC day of UsageDailyRollup
 * is recomputed from the ledger (a repair: the trigger keeps it).
 */
@Processor(QueueName.UsageRollup)
export class UsageRollupProcessor extends LoggedWorkerHost implements OnApplicationBootstrap {
  private readonly logger = new Logger(UsageRollupProcessor.name);

  constructor(
    private readonly rollups: UsageRollupService,
    private readonly partitions: LedgerPartitionsService,
    private readonly trailRetention: TrailRetentionService,
    @Inject(TOLLGATE_CONFIG) private readonly config: WorkerConfig,
  ) {
    super();
  }

  /** At boot too: a worker that starts in a month nobody prepared creates its partition before writing. */
  async onApplicationBootstrap(): Promise<void> {
    const made = await this.partitions.ensureAhead(new Date(), this.config.worker.ledgerPartitionsAhead);
    this.logger.log(`ledger partitions ready: ${made.join(', ')}`);
  }

  async process(job: Job<JobOf<JobName.RollupUsage>>): Promise<UsageRollupResult> {
    if (job.name !== JobName.RollupUsage)
      throw new UnrecoverableError(`unknown job ${job.name} on ${QueueName.UsageRollup}`);
    const now = new Date();
    const days = job.data.day ? [job.data.day] : [];
    let rows = 0;
    try {
      for (const day of days) rows += await this.rollups.rollupDay(day, job.data.orgId);
    } catch (err) {
      // A malformed day will be malformed on every retry.
      if (err instanceof ReportingException) throw new UnrecoverableError(err.message);
      throw err;
    }
    const partitions = await this.partitions.ensureAhead(now, this.config.worker.ledgerPartitionsAhead);
    const dropped = await this.partitions.applyRetention(
      now,
      this.config.worker.ledgerRetentionMonths,
      this.config.worker.ledgerArchiveTable,
    );
    const rebuilt = await this.rollups.rebuildStaleReportRollups(job.data.orgId);
    const trailDeleted = await this.trailRetention.applyRetention(now);
    return { days, rows, partitions, dropped: dropped.map((d) => d.month), rebuilt, trailDeleted };
  }
}
