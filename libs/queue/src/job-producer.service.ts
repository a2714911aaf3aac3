import { getQueueToken } from '@nestjs/bullmq';
import { Inject, Injectable } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { BaseConfig, TOLLGATE_CONFIG } from '@tollgate/config';
import type { Job, JobsOptions, Queue } from 'bullmq';
import { JOB_OPTIONS, JOB_QUEUE, JobName, JobOf, QueueName, syncUpstreamJobOptions } from './queue-names';

type ProducedJob = Exclude<JobName, JobName.DeliverBudgetAlert>;

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

  /** Every job but an alert delivery, which FinanceJobs queues with the deployment's retry delay. */
  async enqueue<N extends ProducedJob>(name: N, payload: JobOf<N>, jobId: string): Promise<Job> {
    return this.queue(JOB_QUEUE[name]).add(name, payload, { ...this.optionsOf(name), jobId });
  }

  /** A job's retry policy: JOB_OPTIONS, or a catalog sync's with the deployment's retry delay. */
  optionsOf(name: ProducedJob): JobsOptions {
    return name === JobName.SyncUpstream ? this.syncOptions : JOB_OPTIONS[name];
  }
}
