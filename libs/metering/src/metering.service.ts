import { createHash } from 'node:crypto';
import { Injectable, OnApplicationShutdown, OnModuleDestroy } from '@nestjs/common';
import { JobName, JobProducer, UsageEventPayload } from '@tollgate/queue';
import { UsageEvent, toPayload } from './usage-event';

/** The most usage events one job carries; more recorded at once go as several jobs. */
export const USAGE_BATCH_MAX_EVENTS = 500;

/**
 * How long the first event of a batch waits for others before its job is added. Callers on the
 * hot path do not wait for it (the budget counters already hold the charge); it turns one BullMQ
 * job per call into one per batch, which is most of the worker's and Redis' work per call.
 */
export const USAGE_LINGER_MS = 20;

interface RecordedUsage {
  payload: UsageEventPayload;
  resolve: () => void;
  reject: (err: unknown) => void;
}

/**
 * Queues usage events for the worker by group commit: the first event waits USAGE_LINGER_MS for
 * others (or until a batch is full), then they go as one job; events recorded while a job is being
 * added wait for it and then go together. A busy edge adds one job per batch, not one per call.
 * Shutdown sends what is waiting at once.
 */
@Injectable()
export class MeteringService implements OnModuleDestroy, OnApplicationShutdown {
  private waiting: RecordedUsage[] = [];
  private sending: Promise<void> | null = null;
  /** Ends the current linger early (a full batch, or shutdown); null when none is running. */
  private endLinger: (() => void) | null = null;

  constructor(private readonly jobs: JobProducer) {}

  /**
   * Resolves once the event is in the queue; rejects if the job carrying it could not be added.
   * The worker writes it to the ledger keyed by the event id, so a repeated event writes nothing twice.
   */
  recordUsage(event: UsageEvent): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.waiting.push({ payload: toPayload(event), resolve, reject });
      if (this.waiting.length >= USAGE_BATCH_MAX_EVENTS) this.endLinger?.();
      this.sending ??= this.sendWaiting();
    });
  }

  /** Waits USAGE_LINGER_MS, or less if a batch fills up or the service shuts down. */
  private linger(): Promise<void> {
    return new Promise<void>((resolve) => {
      const end = () => {
        clearTimeout(timer);
        this.endLinger = null;
        resolve();
      };
      const timer = setTimeout(end, USAGE_LINGER_MS);
      this.endLinger = end;
    });
  }

  async onModuleDestroy(): Promise<void> {
    await this.drain();
  }

  // Requests still finishing while the HTTP server closes record usage after onModuleDestroy.
  async onApplicationShutdown(): Promise<void> {
    await this.drain();
  }

  /** Waits until every recorded event is in the queue or its caller has been told it is not. */
  private async drain(): Promise<void> {
    while (this.sending) {
      this.endLinger?.();
      await this.sending;
    }
  }

  private async sendWaiting(): Promise<void> {
    try {
      await this.linger();
      while (this.waiting.length > 0) {
        const taken = this.waiting;
        this.waiting = [];
        const batches: RecordedUsage[][] = [];
        for (let i = 0; i < taken.length; i += USAGE_BATCH_MAX_EVENTS) batches.push(taken.slice(i, i + USAGE_BATCH_MAX_EVENTS));
        await Promise.all(batches.map((batch) => this.sendBatch(batch)));
      }
    } finally {
      this.sending = null;
    }
  }

  private async sendBatch(batch: RecordedUsage[]): Promise<void> {
    const events = batch.map((r) => r.payload);
    try {
      await this.jobs.enqueue(JobName.RecordUsage, { events }, usageBatchJobId(events));
    } catch (err) {
      for (const r of batch) r.reject(err);
      return;
    }
    for (const r of batch) r.resolve();
  }
}

/**
 * The same batch always gets the same job id, so adding it again is a no-op. The digest covers
 * every event: two batches can share a first event (a caller recording an event again), and an id
 * of the first event alone would make BullMQ silently drop the second batch's other events.
 */
export function usageBatchJobId(events: readonly Pick<UsageEventPayload, 'id'>[]): string {
  const digest = createHash('sha256');
  for (const e of events) digest.update(e.id).update('\n');
  return `usage-${events[0].id}-${events.length}-${digest.digest('base64url').slice(0, 16)}`;
}
