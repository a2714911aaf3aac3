import { Inject, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { Processor } from '@nestjs/bullmq';
import { TOLLGATE_CONFIG, WorkerConfig } from '@tollgate/config';
import { LedgerPartitionsService, TrailRetentionService } from '@tollgate/usage';
import { JobName, JobOf, QueueName, LoggedWorkerHost } from '@tollgate/queue';
import { UsageRollupService } from '@tollgate/reporting';
import { Job, UnrecoverableError } from 'bullmq';

export interface UsageUpkeepResult {
  /** The ledger partitions that exist for this month and the months ahead. */
  partitions: string[];
  /** Months retention dropped (YYYY-MM-01). */
  dropped: string[];
  /** Orgs whose report rollups were rebuilt in their current zone. */
  rebuilt: string[];
  /** Trail steps older than their org's retention, deleted. */
  trailDeleted: number;
}

/** A rebuild an admin asked for: the org and its day (null: every day). */
export interface UsageRollupRebuildResult {
  orgId: string;
  day: string | null;
}

type UsageRollupJob = Job<JobOf<JobName.RollupUsage>> | Job<JobOf<JobName.RebuildUsageRollups>>;

/**
 * The ledger's upkeep (RollupUsage), every 10 minutes: partitions for this month and
 * LEDGER_PARTITIONS_AHEAD months after it, retention (LEDGER_RETENTION_MONTHS), rollups rebuilt for
 * orgs whose zone changed, and agents' trails past their org's retention deleted. None of it reads
 * the ledger (the rollups are kept by the ledger's insert trigger), except a month retention drops
 * and a rebuild. An admin's repair (RebuildUsageRollups) runs the same rebuild for one org, of one
 * day or all.
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

  async process(job: UsageRollupJob): Promise<UsageUpkeepResult | UsageRollupRebuildResult> {
    if (job.name === JobName.RebuildUsageRollups) {
      const { orgId, day } = job.data as JobOf<JobName.RebuildUsageRollups>;
      await this.rollups.rebuild(orgId, day);
      return { orgId, day };
    }
    if (job.name !== JobName.RollupUsage)
      throw new UnrecoverableError(`unknown job ${job.name} on ${QueueName.UsageRollup}`);
    const { orgId } = job.data as JobOf<JobName.RollupUsage>;
    const now = new Date();
    const partitions = await this.partitions.ensureAhead(now, this.config.worker.ledgerPartitionsAhead);
    const dropped = await this.partitions.applyRetention(
      now,
      this.config.worker.ledgerRetentionMonths,
      this.config.worker.ledgerArchiveTable,
    );
    const rebuilt = await this.rollups.rebuildStaleReportRollups(orgId);
    const trailDeleted = await this.trailRetention.applyRetention(now);
    return { partitions, dropped: dropped.map((d) => d.month), rebuilt, trailDeleted };
  }
}
