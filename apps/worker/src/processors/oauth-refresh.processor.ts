import { Processor } from '@nestjs/bullmq';
import { Inject, Logger } from '@nestjs/common';
import { TOLLGATE_CONFIG, WorkerConfig } from '@tollgate/config';
import { UserConnectionService } from '@tollgate/connections';
import { JobName, JobOf, QueueName, LoggedWorkerHost } from '@tollgate/queue';
import { Job, UnrecoverableError } from 'bullmq';

/** Refreshes per-user OAuth tokens before they expire; a refused refresh marks the connection `refresh_failed`. */
@Processor(QueueName.OAuthRefresh)
export class OAuthRefreshProcessor extends LoggedWorkerHost {
  private readonly logger = new Logger(OAuthRefreshProcessor.name);

  constructor(
    private readonly connections: UserConnectionService,
    @Inject(TOLLGATE_CONFIG) private readonly config: WorkerConfig,
  ) {
    super();
  }

  async process(job: Job<JobOf<JobName.RefreshConnections>>): Promise<{ refreshed: number; failed: number }> {
    if (job.name !== JobName.RefreshConnections)
      throw new UnrecoverableError(`unknown job ${job.name} on ${QueueName.OAuthRefresh}`);
    const withinSeconds = job.data.withinSeconds ?? this.config.oauthRefresh.withinSeconds;
    const report = await this.connections.refreshExpiring(withinSeconds * 1000);
    if (report.refreshed + report.failed > 0)
      this.logger.log(`oauth-refresh: ${report.refreshed} refreshed, ${report.failed} failed`);
    return report;
  }
}
