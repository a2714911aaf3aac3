import { Injectable } from '@nestjs/common';
import { JobName, JobProducer } from '@tollgate/queue';
import { UsageEvent, toPayload } from './usage-event';

/** Queues usage events for the worker; the event id is the job id, so a retry enqueues nothing twice. */
@Injectable()
export class MeteringService {
  constructor(private readonly jobs: JobProducer) {}

  async recordUsage(event: UsageEvent): Promise<void> {
    await this.jobs.enqueue(JobName.RecordUsage, toPayload(event), event.id);
  }
}
