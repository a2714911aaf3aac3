import { getQueueToken } from '@nestjs/bullmq';
import { Inject, Injectable } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { BaseConfig, TOLLGATE_CONFIG } from '@tollgate/config';
import type { Job, JobsOptions, Queue } from 'bullmq';
import { JOB_QUEUE, JobName, JobOf, QueueName, jobOptions } from './queue-names';

/** Typed producer: the payload type follows from the job name, the queue from `JOB_QUEUE`. */
@Injectable()
export class JobProducer {
  private readonly queues = new Map<QueueName, Queue>();
  private readonly options: Record<JobName, JobsOptions>;

  constructor(
    private readonly moduleRef: ModuleRef,
    @Inject(TOLLGATE_CONFIG) config: BaseConfig,
  ) {
    this.options = jobOptions(config.jobs);
  }

  queue(name: QueueName): Queue {
    let q = this.queues.get(name);
    if (!q) {
      q = this.moduleRef.get<Queue>(getQueueToken(name), { strict: false });
      this.queues.set(name, q);
    }
    return q;
  }

  async enqueue<N extends JobName>(name: N, payload: JobOf<N>, jobId: string): Promise<Job> {
    return this.queue(JOB_QUEUE[name]).add(name, payload, { ...this.optionsOf(name), jobId });
  }

  /** A job's retry policy, with the deployment's retry delays (`jobOptions`). */
  optionsOf(name: JobName): JobsOptions {
    return this.options[name];
  }
}
