import { Injectable } from '@nestjs/common';
import { PrismaService } from '@tollgate/db';
import { UsageEvent } from './usage-event';

/** Writes usage events to the append-only ledger; a repeated event id writes nothing. */
@Injectable()
export class LedgerService {
  constructor(private readonly prisma: PrismaService) {}

  /**
   * Inserts a batch in one statement; returns how many rows were new. The statement has one shape
   * whatever the batch size (arrays, unnested), so Postgres and Prisma never prepare it again:
   * `createMany` compiled a new query for every batch size, most of the worker's CPU per event.
   */
  async writeUsageEvents(events: UsageEvent[]): Promise<number> {
    if (events.length === 0) return 0;
    const col = <K extends keyof UsageEvent>(k: K) => events.map((e) => e[k]);
    return this.prisma.$executeRaw`
      INSERT INTO "UsageEvent" ("id", "orgId", "teamId", "userId", "keyId", "upstreamId", "toolName", "outcome", "costMicros", "inputTokens", "outputTokens", "latencyMs", "priceRuleId", "occurredAt")
      SELECT * FROM unnest(
        ${col('id')}::text[], ${col('orgId')}::uuid[], ${col('teamId')}::uuid[], ${col('userId')}::uuid[], ${col('keyId')}::uuid[], ${col('upstreamId')}::uuid[],
        ${col('toolName')}::text[], ${col('outcome')}::"UsageOutcome"[], ${events.map((e) => e.costMicros.toString())}::bigint[],
        ${col('inputTokens')}::int[], ${col('outputTokens')}::int[], ${col('latencyMs')}::int[], ${col('priceRuleId')}::uuid[],
        ${events.map((e) => e.occurredAt.toISOString())}::timestamp(3)[]
      )
      ON CONFLICT ("id") DO NOTHING`;
  }
}
