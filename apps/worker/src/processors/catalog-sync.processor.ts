import { Processor } from '@nestjs/bullmq';
import { Inject, Logger, OnModuleInit } from '@nestjs/common';
import { TOLLGATE_CONFIG, WorkerConfig } from '@tollgate/config';
import {
  CatalogException,
  CatalogExceptionCode,
  CatalogSyncService,
  SyncReport,
  TierScoreJobs,
} from '@tollgate/upstream-registry';
import { OutboundExceptionCode, outboundExceptionIn } from '@tollgate/outbound';
import { JobName, JobOf, QueueName, LoggedWorkerHost } from '@tollgate/queue';
import { Job, UnrecoverableError } from 'bullmq';

@Processor(QueueName.CatalogSync)
export class CatalogSyncProcessor extends LoggedWorkerHost implements OnModuleInit {
  private readonly logger = new Logger(CatalogSyncProcessor.name);

  constructor(
    private readonly sync: CatalogSyncService,
    private readonly tierScores: TierScoreJobs,
    @Inject(TOLLGATE_CONFIG) private readonly config: WorkerConfig,
  ) {
    super();
  }

  onModuleInit(): void {
    // Syncs wait on upstreams, not CPU: WORKER_CONCURRENCY of them run at once per worker.
    this.worker.concurrency = this.config.worker.concurrency;
  }

  /** `signal`: aborted when the worker shuts down (see LoggedWorkerHost); the job is retried later. */
  async process(job: Job<JobOf<JobName.SyncUpstream>>, _token?: string, signal?: AbortSignal): Promise<SyncReport> {
    if (job.name !== JobName.SyncUpstream)
      throw new UnrecoverableError(`unknown job ${job.name} on ${QueueName.CatalogSync}`);
    const { orgId, upstreamId, trigger } = job.data;
    try {
      const report = await this.sync.syncUpstream(orgId, upstreamId, trigger, signal);
      // New tools get their default score (and a hot list) without waiting for the schedule.
      if (report.added + report.changed + report.removed > 0) await this.tierScores.requestSoon(orgId);
      return report;
    } catch (err) {
      if (err instanceof CatalogException && err.code === CatalogExceptionCode.UpstreamNotFound) {
        // The upstream was deleted after the job was queued: retrying cannot help.
        this.logger.warn(`discarding ${trigger} sync of upstream ${upstreamId}: it no longer exists`);
        throw new UnrecoverableError(err.message);
      }
      const refused = outboundExceptionIn(err);
      if (refused && refused.code !== OutboundExceptionCode.NameUnresolved) {
        // The outbound rule refused the address or URL (lastSyncError says why): the same rule
        // refuses a retry; the schedule tries again after an operator changed the rule or the URL.
        throw new UnrecoverableError(refused.message);
      }
      throw err;
    }
  }
}
