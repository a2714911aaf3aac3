import { UsageEvent } from '@tollgate/metering';

interface Pending {
  event: UsageEvent;
  resolve: () => void;
  reject: (err: unknown) => void;
}

/**
 * Gathers usage events from concurrently running jobs into one INSERT: a batch goes out when it
 * is full or when the event loop has nothing else queued, so a lone event is not held back.
 */
export class LedgerBatcher {
  private pending: Pending[] = [];
  private scheduled = false;

  constructor(
    private readonly write: (events: UsageEvent[]) => Promise<number>,
    private readonly maxBatch: number,
  ) {}

  add(event: UsageEvent): Promise<void> {
    return new Promise((resolve, reject) => {
      this.pending.push({ event, resolve, reject });
      if (this.pending.length >= this.maxBatch) void this.flush();
      else if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => void this.flush());
      }
    });
  }

  private async flush(): Promise<void> {
    this.scheduled = false;
    const batch = this.pending.splice(0, this.maxBatch);
    if (batch.length === 0) return;
    try {
      await this.write(batch.map((p) => p.event));
      for (const p of batch) p.resolve();
    } catch (err) {
      for (const p of batch) p.reject(err);
    }
  }
}
