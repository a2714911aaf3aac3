import { getQueueToken } from '@nestjs/bullmq';
import { Injectable } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import type { Job, Queue } from 'bullmq';
import { JOB_OPTIONS, JOB_QUEUE, JobName, JobOf, QueueName } from './queue-names';

/** Typed producer: the payload type follows from the job name, the queue from `JOB_QUEUE`. */
@Injectable()
export class JobProducer {
  private readonly queues = new Map<QueueName, Queue>();

  constructor(private readonly moduleRef: ModuleRef) {}

  queue(name: QueueName): Queue {
    let q = this.queues.get(name);
    if (!q) {
      q = this.moduleRef.get<Queue>(getQueueToken(name), { strict: false });
      this.queues.set(name, q);
    }
    return q;
  }

  async enqueue<N extends JobName>(name: N, payload: JobOf<N>, jobId: string): Promise<Job> {
    return this.queue(JOB_QUEUE[name]).add(name, payload, { ...JOB_OPTIONS[name], jobId });
  }
}
