import { Injectable } from '@nestjs/common';
import { PrismaService } from '@tollgate/db';
import { jsonbText } from './jsonb-text';
import { RefusedCall } from './refused-call';
import { TrailEvent } from './trail-event';
import { traceIdOf, UsageEvent } from './usage-event';

/**
 * Writes usage events to the append-only ledger; a repeated event id writes nothing. The ledger is
 * partitioned by month on occurredAt, so its key (and the conflict target) is (id, occurredAt): an
 * event id always comes with the same occurredAt (the edge fixes both when it records the call).
 */
@Injectable()
export class LedgerService {
  constructor(private readonly prisma: PrismaService) {}

  /**
   * Inserts a batch in one statement; returns how many rows were new. The statement has one shape
   * whatever the batch size (arrays, unnested: 15 parameters for any number of rows) and goes to
   * Postgres on the pool under Prisma (through Prisma, even a raw query was compiled again on every
   * batch, most of the worker's CPU per event). It is an unnamed statement, parsed on each batch
   * (well under a millisecond): a named prepared statement lives on one server connection, which a
   * PgBouncer in transaction mode does not keep (before 1.21 it fails with "does not exist").
   */
  async writeUsageEvents(events: UsageEvent[]): Promise<number> {
    return this.insertBatch(events.length, INSERT_USAGE_EVENTS, usageEventColumns(events));
  }

  /**
   * Inserts refused calls in one statement, like writeUsageEvents (a repeated id writes nothing);
   * the table's trigger adds them to RefusedCallRollup in the same transaction. Returns how many
   * rows were new.
   */
  async writeRefusedCalls(refusals: RefusedCall[]): Promise<number> {
    const col = columnsOf(refusals);
    return this.insertBatch(refusals.length, INSERT_REFUSED_CALLS, [
      col('id'),
      col('orgId'),
      col('teamId'),
      col('userId'),
      col('keyId'),
      col('upstreamId'),
      col('toolName'),
      col('code'),
      col('budgetId'),
      col('calls'),
      col('latencyMs'),
      refusals.map((r) => r.occurredAt.toISOString()),
    ]);
  }

  /** Inserts trail events in one statement, like writeUsageEvents (a repeated id writes nothing). */
  async writeTrailEvents(trail: TrailEvent[]): Promise<number> {
    const col = columnsOf(trail);
    return this.insertBatch(trail.length, INSERT_TRAIL_EVENTS, [
      col('id'),
      col('orgId'),
      col('teamId'),
      col('userId'),
      col('keyId'),
      col('sessionId'),
      col('kind'),
      col('name'),
      col('catalogVersion'),
      col('tokens'),
      col('ok'),
      col('code'),
      col('callId'),
      trail.map((t) => (t.costMicros === null ? null : String(t.costMicros))),
      trail.map((t) => jsonbText(t.detail)),
      trail.map((t) => (t.content === null ? null : jsonbText(t.content))),
      trail.map((t) => t.occurredAt.toISOString()),
    ]);
  }

  /** Runs one of the batch inserts (one array per column, unnested); answers how many rows were new. */
  private async insertBatch(rows: number, text: string, values: unknown[]): Promise<number> {
    if (rows === 0) return 0;
    const result = await this.prisma.pool.query({ text, values });
    return result.rowCount ?? 0;
  }
}

/**
 * A batch of usage events as INSERT_USAGE_EVENTS takes it: one array literal per column, in its
 * order (the trace id last), built with one join each. Given arrays, the driver would convert and
 * escape every element on its own (a call, two regular expressions and a string each: 15 columns of
 * 5,000 events), a fifth of the drain's CPU in the worker with the garbage it leaves.
 */
export function usageEventColumns(events: readonly UsageEvent[]): string[] {
  const text = (f: (e: UsageEvent) => string | null) => textArray(events, f);
  const num = (f: (e: UsageEvent) => number | bigint) => `{${events.map((e) => String(f(e))).join(',')}}`;
  return [
    text((e) => e.id),
    text((e) => e.orgId),
    text((e) => e.teamId),
    text((e) => e.userId),
    text((e) => e.keyId),
    text((e) => e.upstreamId),
    text((e) => e.toolName),
    text((e) => e.outcome),
    num((e) => e.costMicros),
    num((e) => e.inputTokens),
    num((e) => e.outputTokens),
    num((e) => e.latencyMs),
    text((e) => e.priceRuleId),
    text((e) => e.occurredAt.toISOString()),
    text((e) => traceIdOf(e.traceparent)),
  ];
}

/** A Postgres array literal of text values: each quoted (`"` and `\` escaped), null as NULL. */
function textArray<T>(rows: readonly T[], f: (row: T) => string | null): string {
  return `{${rows
    .map((r) => {
      const v = f(r);
      if (v === null) return 'NULL';
      return NEEDS_ESCAPE.test(v) ? `"${v.replace(ESCAPED, '\\$&')}"` : `"${v}"`;
    })
    .join(',')}}`;
}

const NEEDS_ESCAPE = /["\\]/;
const ESCAPED = /["\\]/g;

/** Reads one column of a batch: `columnsOf(events)('orgId')` is every event's orgId, in order. */
function columnsOf<T>(rows: readonly T[]) {
  return <K extends keyof T>(k: K): T[K][] => rows.map((r) => r[k]);
}

const INSERT_TRAIL_EVENTS = `
  INSERT INTO "TrailEvent" ("id", "orgId", "teamId", "userId", "keyId", "sessionId", "kind", "name", "catalogVersion", "tokens", "ok", "code", "callId", "costMicros", "detail", "content", "occurredAt")
  SELECT * FROM unnest(
    $1::text[], $2::uuid[], $3::uuid[], $4::uuid[], $5::uuid[], $6::text[], $7::text[], $8::text[], $9::text[], $10::int[], $11::boolean[],
    $12::text[], $13::text[], $14::bigint[], $15::jsonb[], $16::jsonb[], $17::timestamp(3)[]
  )
  ON CONFLICT ("id") DO NOTHING`;

const INSERT_USAGE_EVENTS = `
  INSERT INTO "UsageEvent" ("id", "orgId", "teamId", "userId", "keyId", "upstreamId", "toolName", "outcome", "costMicros", "inputTokens", "outputTokens", "latencyMs", "priceRuleId", "occurredAt", "traceId")
  SELECT * FROM unnest(
    $1::text[], $2::uuid[], $3::uuid[], $4::uuid[], $5::uuid[], $6::uuid[], $7::text[], $8::"UsageOutcome"[], $9::bigint[],
    $10::int[], $11::int[], $12::int[], $13::uuid[], $14::timestamp(3)[], $15::text[]
  )
  ON CONFLICT ("id", "occurredAt") DO NOTHING`;

const INSERT_REFUSED_CALLS = `
  INSERT INTO "RefusedCall" ("id", "orgId", "teamId", "userId", "keyId", "upstreamId", "toolName", "code", "budgetId", "calls", "latencyMs", "occurredAt")
  SELECT * FROM unnest(
    $1::text[], $2::uuid[], $3::uuid[], $4::uuid[], $5::uuid[], $6::uuid[], $7::text[], $8::text[], $9::uuid[], $10::int[], $11::int[], $12::timestamp(3)[]
  )
  ON CONFLICT ("id", "occurredAt") DO NOTHING`;
