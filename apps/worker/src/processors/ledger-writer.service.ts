import { Injectable, Logger } from '@nestjs/common';
import { LedgerService, UsageEvent } from '@tollgate/metering';
import { FinanceJobs } from '@tollgate/reporting';

/** What the worker does with usage events, whichever way they came: write them, then check budgets. */
@Injectable()
export class LedgerWriter {
  private readonly logger = new Logger(LedgerWriter.name);

  constructor(
    private readonly ledger: LedgerService,
    private readonly jobs: FinanceJobs,
  ) {}

  /**
   * Writes the events in one INSERT (an event id already in the ledger writes nothing) and returns
   * how many rows were new. New spend may have crossed a budget threshold, so the alert checks of
   * their orgs are requested now, not in 30 s; not awaited: a lost check is caught by the schedule,
   * and awaiting a queue that shuts down first would hold the write (and shutdown) forever.
   */
  async write(events: UsageEvent[]): Promise<number> {
    if (events.length === 0) return 0;
    const written = await this.ledger.writeUsageEvents(events);
    for (const orgId of new Set(events.map((e) => e.orgId))) {
      this.jobs
        .requestAlertCheck(orgId)
        .catch((err: Error) => this.logger.warn(`alert check for org ${orgId} not queued: ${err.message}`));
    }
    return written;
  }
}
