import { InjectQueue } from '@nestjs/bullmq';
import { Injectable } from '@nestjs/common';
import { JOB_OPTIONS, JobName, QueueName } from '@tollgate/queue';
import type { Queue } from 'bullmq';

/** The id of the repeating pass over every organisation. */
export const TIER_SCORES_SCHEDULER_ID = 'tier-scores-all';

/** Puts tier-score computations on the queue: on demand, after catalog changes, and on a schedule. */
@Injectable()
export class TierScoreJobs {
  constructor(@InjectQueue(QueueName.TierScores) private readonly queue: Queue) {}

  /** A computation for one organisation now; returns the job id to wait on. */
  async requestTierScores(orgId: string): Promise<string> {
    const job = await this.queue.add(
      JobName.ComputeTierScores,
      { orgId },
      { ...JOB_OPTIONS[JobName.ComputeTierScores], jobId: `tier-scores-${orgId}-${Date.now()}` },
    );
    return job.id!;
  }

  /** After a catalog change: at most one waiting per organisation, so a burst of syncs costs one pass. */
  async requestSoon(orgId: string): Promise<void> {
    await this.queue.add(
      JobName.ComputeTierScores,
      { orgId },
      {
        ...JOB_OPTIONS[JobName.ComputeTierScores],
        deduplication: { id: `tier-scores-${orgId}`, keepLastIfActive: true },
      },
    );
  }

  /** The repeating pass over every organisation (idempotent upsert: one scheduler whatever the number of workers). */
  async scheduleRecurring(everyMs: number): Promise<void> {
    await this.queue.upsertJobScheduler(
      TIER_SCORES_SCHEDULER_ID,
      { every: everyMs },
      { name: JobName.ComputeTierScores, data: { orgId: null }, opts: JOB_OPTIONS[JobName.ComputeTierScores] },
    );
  }
}
