import { Inject, Injectable, Logger } from '@nestjs/common';
import { Counter, Histogram, Registry } from 'prom-client';
import { inLedgerWriteSpans } from './ledger-tracing';
import { LedgerService } from './ledger.service';
import { RefusedCall } from './refused-call';
import { TrailEvent } from './trail-event';
import { UsageEvent } from './usage-event';

/**
 * Injection token for `UsageWrittenListener`: told of each organisation whose usage a batch wrote
 * (the worker binds it to budget alert checks, which belong to reporting).
 */
export const USAGE_WRITTEN_LISTENER = Symbol('USAGE_WRITTEN_LISTENER');

export interface UsageWrittenListener {
  usageWritten(orgId: string): Promise<unknown>;
}

/** What the worker does with usage events, whichever way they came: write them, then check budgets. */
@Injectable()
export class LedgerWriter {
  private readonly logger = new Logger(LedgerWriter.name);
  readonly registry = new Registry();
  private readonly rows = new Counter({
    name: 'tollgate_ledger_rows_written_total',
    help: 'Usage events this worker wrote to the ledger (new rows; a replayed event writes none)',
    registers: [this.registry],
  });
  private readonly writes = new Histogram({
    name: 'tollgate_ledger_write_seconds',
    help: "One batch INSERT into the ledger (Postgres' latency as the ledger sees it)",
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5],
    registers: [this.registry],
  });

  constructor(
    private readonly ledger: LedgerService,
    @Inject(USAGE_WRITTEN_LISTENER) private readonly listener: UsageWrittenListener,
  ) {}

  /**
   * Writes the events in one INSERT (an event id already in the ledger writes nothing) and returns
   * how many rows were new. New spend may have crossed a budget threshold, so the alert checks of
   * their orgs are requested now, not in 30 s; not awaited: a lost check is caught by the schedule,
   * and awaiting a queue that shuts down first would hold the write (and shutdown) forever.
   */
  async write(events: UsageEvent[]): Promise<number> {
    if (events.length === 0) return 0;
    const stop = this.writes.startTimer();
    const written = await inLedgerWriteSpans(events, () => this.ledger.writeUsageEvents(events));
    stop();
    this.rows.inc(written);
    for (const orgId of new Set(events.map((e) => e.orgId))) {
      this.listener
        .usageWritten(orgId)
        .catch((err: Error) => this.logger.warn(`alert check for org ${orgId} not queued: ${err.message}`));
    }
    return written;
  }

  /** Writes refused calls in one INSERT (a repeated id writes nothing); returns how many rows were new. */
  async writeRefusals(refusals: RefusedCall[]): Promise<number> {
    if (refusals.length === 0) return 0;
    return this.ledger.writeRefusedCalls(refusals);
  }

  /** Writes trail events in one INSERT (a repeated id writes nothing); returns how many rows were new. */
  async writeTrail(trail: TrailEvent[]): Promise<number> {
    if (trail.length === 0) return 0;
    return this.ledger.writeTrailEvents(trail);
  }
}
