import { Injectable } from '@nestjs/common';
import { PrismaService } from '@tollgate/db';
import { UsageEvent } from './usage-event';

/** Writes usage events to the append-only ledger; a repeated event id writes nothing. */
@Injectable()
export class LedgerService {
  constructor(private readonly prisma: PrismaService) {}

  /** Inserts a batch in one statement; returns how many rows were new. */
  async writeUsageEvents(events: UsageEvent[]): Promise<number> {
    if (events.length === 0) return 0;
    const res = await this.prisma.usageEvent.createMany({ data: events, skipDuplicates: true });
    return res.count;
  }
}
