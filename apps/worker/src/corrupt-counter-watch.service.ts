import { Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { COUNTER_CORRUPT_CHANNEL } from '@tollgate/budget';
import { RedisService } from '@tollgate/redis';
import { FinanceJobs } from '@tollgate/reporting';

/**
 * Rebuilds a corrupt budget counter as soon as an edge finds it (the edge refuses its calls with
 * a retry hint of seconds, CORRUPT_COUNTER_RETRY_MS), instead of at the next scheduled
 * reconciliation minutes later: one reconciliation job with repair for that organisation.
 */
@Injectable()
export class CorruptCounterWatch implements OnApplicationBootstrap {
  private readonly logger = new Logger(CorruptCounterWatch.name);

  constructor(
    private readonly redis: RedisService,
    private readonly finance: FinanceJobs,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.redis.subscribe(COUNTER_CORRUPT_CHANNEL, (orgId) => {
      this.finance
        .requestCounterRebuild(orgId)
        .catch((err: Error) =>
          this.logger.warn(`rebuild of org ${orgId}'s corrupt counter not queued (the schedule will): ${err.message}`),
        );
    });
  }
}
