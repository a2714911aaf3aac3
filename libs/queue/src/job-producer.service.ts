import { getQueueToken } from '@nestjs/bullmq';
import { Inject, Injectable } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { BaseConfig, TOLLGATE_CONFIG } from '@tollgate/config';
import type { Job, JobsOptions, Queue } from 'bullmq';
import { JOB_OPTIONS, JOB_QUEUE, JobName, JobOf, QueueName, syncUpstreamJobOptions } from './queue-names';

/** Typed producer: the payload type follows from the job name, the queue from `JOB_QUEUE`. */
@Injectable()
export class JobProducer {
  private readonly queues = new Map<QueueName, Queue>();
  private readonly syncOptions: JobsOptions;

  constructor(
    private readonly moduleRef: ModuleRef,
    @Inject(TOLLGATE_CONFIG) config: BaseConfig,
  ) {
    this.syncOptions = syncUpstreamJobOptions(config.jobs.syncRetryDelayMs);
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

  /** A job's retry policy: JOB_OPTIONS, or a catalog sync's with the deployment's retry delay. */
  optionsOf(name: JobName): JobsOptions {
    return name === JobName.SyncUpstream ? this.syncOptions : JOB_OPTIONS[name];
  }
}
