import { Injectable } from '@nestjs/common';
import { PrismaService } from '@tollgate/db';
import { UsageEvent } from './usage-event';

/** Writes usage events to the append-only ledger; a repeated event id writes nothing. */
@Injectable()
export class LedgerService {
  constructor(private readonly prisma: PrismaService) {}

  /**
   * Inserts a batch in one statement; returns how many rows were new. The statement has one shape
   * whatever the batch size (arrays, unnested), and goes to Postgres as a named prepared statement
   * on the pool under Prisma: through Prisma, even a raw query was compiled again on every batch,
   * most of the worker's CPU per event.
   */
  async writeUsageEvents(events: UsageEvent[]): Promise<number> {
    if (events.length === 0) return 0;
    const col = <K extends keyof UsageEvent>(k: K) => events.map((e) => e[k]);
    const result = await this.prisma.pool.query({
      name: 'tollgate-ledger-insert',
      text: INSERT_USAGE_EVENTS,
      values: [
        col('id'),
        col('orgId'),
        col('teamId'),
        col('userId'),
        col('keyId'),
        col('upstreamId'),
        col('toolName'),
        col('outcome'),
        events.map((e) => e.costMicros.toString()),
        col('inputTokens'),
        col('outputTokens'),
        col('latencyMs'),
        col('priceRuleId'),
        events.map((e) => e.occurredAt.toISOString()),
      ],
    });
    return result.rowCount ?? 0;
  }
}

const INSERT_USAGE_EVENTS = `
  INSERT INTO "UsageEvent" ("id", "orgId", "teamId", "userId", "keyId", "upstreamId", "toolName", "outcome", "costMicros", "inputTokens", "outputTokens", "latencyMs", "priceRuleId", "occurredAt")
  SELECT * FROM unnest(
    $1::text[], $2::uuid[], $3::uuid[], $4::uuid[], $5::uuid[], $6::uuid[], $7::text[], $8::"UsageOutcome"[], $9::bigint[],
    $10::int[], $11::int[], $12::int[], $13::uuid[], $14::timestamp(3)[]
  )
  ON CONFLICT ("id") DO NOTHING`;
