import { InjectQueue } from '@nestjs/bullmq';
import { Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { TOLLGATE_CONFIG, WorkerConfig } from '@tollgate/config';
import { JOB_OPTIONS, JobName, JobOf, QueueName } from '@tollgate/queue';
import type { Queue } from 'bullmq';

/** At boot, makes sure the oauth-refresh schedule exists (an idempotent upsert). */
@Injectable()
export class OAuthRefreshScheduler implements OnApplicationBootstrap {
  private readonly logger = new Logger(OAuthRefreshScheduler.name);

  constructor(
    @InjectQueue(QueueName.OAuthRefresh) private readonly queue: Queue,
    @Inject(TOLLGATE_CONFIG) private readonly config: WorkerConfig,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const data: JobOf<JobName.RefreshConnections> = { withinSeconds: null };
    await this.queue.upsertJobScheduler(
      'oauth-refresh',
      { every: this.config.oauthRefresh.everySeconds * 1000 },
      { name: JobName.RefreshConnections, data, opts: JOB_OPTIONS[JobName.RefreshConnections] },
    );
    this.logger.log(`oauth-refresh every ${this.config.oauthRefresh.everySeconds} s (tokens expiring within ${this.config.oauthRefresh.withinSeconds} s)`);
  }
}
