import { InjectQueue } from '@nestjs/bullmq';
import { Injectable } from '@nestjs/common';
import type { Job, Queue } from 'bullmq';
import { JOB_OPTIONS, JobName, JobOf, QueueName } from './queue-names';

/** Typed producer: the payload type follows from the job name; ids are deterministic. */
@Injectable()
export class JobProducer {
  constructor(
    @InjectQueue(QueueName.CatalogSync) private readonly catalogSync: Queue,
    @InjectQueue(QueueName.UsageLedger) private readonly usageLedger: Queue,
  ) {}

  queue(name: QueueName): Queue {
    return name === QueueName.CatalogSync ? this.catalogSync : this.usageLedger;
  }

  async enqueue<N extends JobName>(name: N, payload: JobOf<N>, jobId: string): Promise<Job> {
    const queue = name === JobName.SyncUpstream ? this.catalogSync : this.usageLedger;
    return queue.add(name, payload, { ...JOB_OPTIONS[name], jobId });
  }
}
