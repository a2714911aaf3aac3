import { UsageEvent } from '@tollgate/metering';

interface Pending {
  events: UsageEvent[];
  resolve: () => void;
  reject: (err: unknown) => void;
}

/**
 * Gathers the usage events of concurrently running jobs into one INSERT: a write goes out when
 * `maxBatch` events wait or when the event loop has nothing else queued, so a lone job is not held
 * back. A job's events are never split across writes, so a write may exceed `maxBatch` only by
 * holding one job that alone is larger.
 */
export class LedgerBatcher {
  private pending: Pending[] = [];
  private pendingEvents = 0;
  private scheduled = false;

  constructor(
    private readonly write: (events: UsageEvent[]) => Promise<number>,
    private readonly maxBatch: number,
  ) {}

  /** Resolves once every one of `events` is in the ledger (or was already). */
  add(events: UsageEvent[]): Promise<void> {
    return new Promise((resolve, reject) => {
      this.pending.push({ events, resolve, reject });
      this.pendingEvents += events.length;
      while (this.pendingEvents >= this.maxBatch) void this.flush(this.takeBatch());
      if (this.pending.length > 0 && !this.scheduled) {
        this.scheduled = true;
        setImmediate(() => {
          this.scheduled = false;
          void this.flush(this.takeBatch());
        });
      }
    });
  }

  /** Whole jobs from the front, up to `maxBatch` events (at least one job). */
  private takeBatch(): Pending[] {
    let n = 0;
    let count = 0;
    while (n < this.pending.length && (n === 0 || count + this.pending[n].events.length <= this.maxBatch)) {
      count += this.pending[n].events.length;
      n++;
    }
    this.pendingEvents -= count;
    return this.pending.splice(0, n);
  }

  private async flush(batch: Pending[]): Promise<void> {
    if (batch.length === 0) return;
    try {
      await this.write(batch.length === 1 ? batch[0].events : batch.flatMap((p) => p.events));
      for (const p of batch) p.resolve();
    } catch (err) {
      for (const p of batch) p.reject(err);
    }
  }
}
