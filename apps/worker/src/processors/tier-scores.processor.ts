import { Processor } from '@nestjs/bullmq';
import { Inject, Logger } from '@nestjs/common';
import {
  DEFAULT_TIER_SCORE_SETTINGS,
  TierScoreResult,
  TierScoreService,
  TierScoreSettings,
} from '@tollgate/upstream-registry';
import { TOLLGATE_CONFIG, WorkerConfig } from '@tollgate/config';
import { JobName, JobOf, QueueName, LoggedWorkerHost } from '@tollgate/queue';
import { Job, UnrecoverableError } from 'bullmq';

/** Recomputes tier scores from the usage rollups: one organisation, or every one on the schedule. */
@Processor(QueueName.TierScores)
export class TierScoresProcessor extends LoggedWorkerHost {
  private readonly logger = new Logger(TierScoresProcessor.name);
  private readonly settings: TierScoreSettings;

  constructor(
    private readonly tierScores: TierScoreService,
    @Inject(TOLLGATE_CONFIG) config: WorkerConfig,
  ) {
    super();
    this.settings = {
      ...DEFAULT_TIER_SCORE_SETTINGS,
      weights: config.tierScores.weights,
      thresholds: config.tierScores.thresholds,
      windowDays: config.tierScores.windowDays,
    };
  }

  async process(job: Job<JobOf<JobName.ComputeTierScores>>): Promise<TierScoreResult[]> {
    if (job.name !== JobName.ComputeTierScores)
      throw new UnrecoverableError(`unknown job ${job.name} on ${QueueName.TierScores}`);
    const orgIds = job.data.orgId ? [job.data.orgId] : await this.tierScores.orgsWithTools();
    const results: TierScoreResult[] = [];
    for (const orgId of orgIds) results.push(await this.tierScores.computeForOrg(orgId, this.settings));
    const changed = results.reduce((n, r) => n + r.changed, 0);
    if (changed > 0)
      this.logger.log(
        `tier scores: ${changed} tool(s) changed in ${results.filter((r) => r.changed > 0).length} org(s)`,
      );
    return results;
  }
}
