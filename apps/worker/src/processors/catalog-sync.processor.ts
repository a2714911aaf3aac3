import { Processor, WorkerHost } from '@nestjs/bullmq';
import { Logger } from '@nestjs/common';
import { CatalogException, CatalogExceptionCode, CatalogSyncService, SyncReport, TierScoreJobs } from '@tollgate/catalog';
import { JobName, JobOf, QueueName } from '@tollgate/queue';
import { Job, UnrecoverableError } from 'bullmq';

@Processor(QueueName.CatalogSync, { concurrency: 4 })
export class CatalogSyncProcessor extends WorkerHost {
  private readonly logger = new Logger(CatalogSyncProcessor.name);

  constructor(
    private readonly sync: CatalogSyncService,
    private readonly tierScores: TierScoreJobs,
  ) {
    super();
  }

  async process(job: Job<JobOf<JobName.SyncUpstream>>): Promise<SyncReport> {
    if (job.name !== JobName.SyncUpstream) throw new UnrecoverableError(`unknown job ${job.name} on ${QueueName.CatalogSync}`);
    const { orgId, upstreamId, trigger } = job.data;
    try {
      const report = await this.sync.syncUpstream(orgId, upstreamId);
      // New tools get their default score (and a hot list) without waiting for the schedule.
      if (report.added + report.changed + report.removed > 0) await this.tierScores.requestSoon(orgId);
      return report;
    } catch (err) {
      if (err instanceof CatalogException && err.code === CatalogExceptionCode.UpstreamNotFound) {
        // The upstream was deleted after the job was queued: retrying cannot help.
        this.logger.warn(`discarding ${trigger} sync of upstream ${upstreamId}: it no longer exists`);
        throw new UnrecoverableError(err.message);
      }
      throw err;
    }
  }
}
