import { Injectable } from '@nestjs/common';
import { JobName, JobProducer, QueueName, SyncTrigger } from '@tollgate/queue';

/** The id of an upstream's repeating catalog sync. */
export function upstreamSyncSchedulerId(upstreamId: string): string {
  return `sync-${upstreamId}`;
}

/** The id of a sync queued now, known before it is queued (an audit row may name it). */
export function syncJobIdOf(upstreamId: string, trigger: SyncTrigger): string {
  return `sync-${upstreamId}-${trigger}-${Date.now()}`;
}

/** Puts catalog syncs on the queue: on demand, and on each upstream's own interval. */
@Injectable()
export class CatalogScheduleService {
  constructor(private readonly jobs: JobProducer) {}

  /** Queues a sync now; returns the job id to wait on. */
  async requestSync(
    orgId: string,
    upstreamId: string,
    trigger: SyncTrigger,
    jobId = syncJobIdOf(upstreamId, trigger),
  ): Promise<string> {
    const job = await this.jobs.enqueue(JobName.SyncUpstream, { orgId, upstreamId, trigger }, jobId);
    return job.id!;
  }

  /** Creates or updates the repeating sync of an upstream (idempotent: one scheduler per upstream). */
  async scheduleUpstreamSync(upstream: {
    id: string;
    orgId: string;
    syncIntervalSeconds: number;
    enabled: boolean;
    syncPaused?: boolean;
    deletedAt?: Date | null;
  }): Promise<void> {
    const queue = this.jobs.queue(QueueName.CatalogSync);
    const schedulerId = upstreamSyncSchedulerId(upstream.id);
    // Disabled, paused or deleted: no scheduler (the worker's boot and checks skip them too).
    if (!upstream.enabled || upstream.syncPaused || upstream.deletedAt) {
      await queue.removeJobScheduler(schedulerId);
      return;
    }
    await queue.upsertJobScheduler(
      schedulerId,
      { every: upstream.syncIntervalSeconds * 1000 },
      {
        name: JobName.SyncUpstream,
        data: { orgId: upstream.orgId, upstreamId: upstream.id, trigger: 'schedule' as SyncTrigger },
        opts: this.jobs.optionsOf(JobName.SyncUpstream),
      },
    );
  }
}
