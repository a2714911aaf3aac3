import { Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { TierScoreJobs } from '@tollgate/catalog';
import { TOLLGATE_CONFIG, WorkerConfig } from '@tollgate/config';

/** At boot, makes sure the repeating tier-score pass exists (an idempotent upsert). */
@Injectable()
export class TierScoreScheduler implements OnApplicationBootstrap {
  private readonly logger = new Logger(TierScoreScheduler.name);

  constructor(
    private readonly jobs: TierScoreJobs,
    @Inject(TOLLGATE_CONFIG) private readonly config: WorkerConfig,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.jobs.scheduleRecurring(this.config.tierScores.everySeconds * 1000);
    this.logger.log(`tier-score schedule in place: every ${this.config.tierScores.everySeconds} s`);
  }
}
