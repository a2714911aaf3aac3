import { Injectable } from '@nestjs/common';
import { PrismaService } from '@tollgate/db';
import { DatabaseError, Query } from 'pg';
import { jsonbText } from './jsonb-text';
import { RefusedCall } from './refused-call';
import { TrailEvent } from './trail-event';
import { traceIdOf, UsageEvent } from './usage-event';

/**
 * Writes usage events to the append-only ledger; a repeated event id writes nothing. The ledger is
 * partitioned by month on occurredAt, and its key (and the conflict target) is (orgId, occurredAt,
 * id), which also serves the org's reads in time order: an event id always comes with the same org
 * and occurredAt (the edge fixes them when it records the call).
 */
@Injectable()
export class LedgerService {
  constructor(private readonly prisma: PrismaService) {}

  /**
   * Writes a batch; returns how many rows were new. First as one `COPY` (no statement to parse, no
   * arrays to unnest, no conflict check per row: about a third of Postgres' CPU an event less than
   * the INSERT); the primary key refuses a repeated event id there (the whole COPY, so nothing is
   * written twice), and only then is the batch inserted with `ON CONFLICT DO NOTHING`, which writes
   * the new rows alone. Repeats are rare (a batch written and not acknowledged, a take-over), so
   * almost every batch costs one COPY. Both go to Postgres on the pool under Prisma, as one
   * statement each (a PgBouncer in transaction mode passes either; the INSERT is an unnamed
   * statement: a named one lives on one server connection).
   */
  async writeUsageEvents(events: UsageEvent[]): Promise<number> {
    if (events.length === 0) return 0;
    try {
      return await this.copyBatch(COPY_USAGE_EVENTS, usageEventCopyRows(events));
    } catch (err) {
      if ((err as { code?: unknown }).code !== UNIQUE_VIOLATION) throw err;
    }
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

  /** Runs one COPY FROM STDIN of `rows` (COPY's text format); answers how many rows it wrote. */
  private async copyBatch(text: string, rows: Buffer): Promise<number> {
    const client = await this.prisma.pool.connect();
    let failed: Error | undefined;
    try {
      return await new Promise<number>((resolve, reject) =>
        client.query(new CopyFrom(text, rows, (err, result) => (err ? reject(err) : resolve(result.rowCount ?? 0)))),
      );
    } catch (err) {
      // A connection that failed is not given back to the pool; one Postgres answered with an error is.
      failed = err instanceof DatabaseError ? undefined : (err as Error);
      throw err;
    } finally {
      client.release(failed);
    }
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

/**
 * A batch of usage events in COPY's text format, in COPY_USAGE_EVENTS' column order: a line a row,
 * tab-separated, null as \N; only the free-text columns (id, tool name) can need escaping (uuids,
 * numbers, the outcome, the time and the trace id are checked by the entry's parse). Each line is
 * written into one buffer as it is made: 5,000 lines added to one string made a rope of some
 * 150,000 pieces, flattened again to be encoded (a sixth of the worker's CPU in the drain's profile).
 */
export function usageEventCopyRows(events: readonly UsageEvent[]): Buffer {
  let out = Buffer.allocUnsafe(events.length * COPY_LINE_BYTES);
  let length = 0;
  for (const e of events) {
    const line = `${copyText(e.id)}\t${e.orgId}\t${e.teamId}\t${e.userId}\t${e.keyId}\t${e.upstreamId}\t${copyText(e.toolName)}\t${e.outcome}\t${e.costMicros}\t${e.inputTokens}\t${e.outputTokens}\t${e.latencyMs}\t${e.priceRuleId ?? '\\N'}\t${e.occurredAt.toISOString()}\t${traceIdOf(e.traceparent) ?? '\\N'}\n`;
    // At most 3 bytes of UTF-8 a UTF-16 unit (a surrogate pair: 4 for 2); counted only near the end.
    const room = out.length - length;
    if (room < line.length * 3 && room < Buffer.byteLength(line)) {
      const grown = Buffer.allocUnsafe(Math.max(out.length * 2, length + line.length * 3));
      out.copy(grown, 0, 0, length);
      out = grown;
    }
    length += out.write(line, length);
  }
  return out.subarray(0, length);
}

/** More than a usage event's COPY line takes (six uuids and an id of 36 characters, a tool name, a trace id): about 360 bytes. */
const COPY_LINE_BYTES = 400;

/** A text value as COPY's text format reads it: backslash, tab, newline and return escaped. */
function copyText(v: string): string {
  return COPY_ESCAPE.test(v) ? v.replace(COPY_ESCAPED, (c) => COPY_ESCAPES[c]) : v;
}

const COPY_ESCAPE = /[\\\t\n\r]/;
const COPY_ESCAPED = /[\\\t\n\r]/g;
const COPY_ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };
const UNIQUE_VIOLATION = '23505';

/** The connection a query is given (pg's, untyped): its socket, and the end of COPY data. */
interface CopyConnection {
  stream: { write(chunk: Buffer): boolean };
  endCopyFrom(): void;
}

/**
 * A `COPY ... FROM STDIN` with its data in hand: pg runs it as a simple query and, when Postgres
 * asks for the data, this writes it to the socket as one CopyData message (framed here, as
 * pg-copy-streams does: pg's own message writer would copy the megabyte again) and ends it.
 */
class CopyFrom extends Query {
  constructor(
    text: string,
    // Not `rows`: pg's Query reads that as the rows to fetch a page, and would prepare the statement.
    private readonly data: Buffer,
    callback: (err: Error | undefined, result: { rowCount: number | null }) => void,
  ) {
    super(text, callback);
  }

  handleCopyInResponse(connection: CopyConnection): void {
    const header = Buffer.allocUnsafe(5);
    header[0] = COPY_DATA;
    header.writeInt32BE(4 + this.data.length, 1);
    connection.stream.write(header);
    connection.stream.write(this.data);
    connection.endCopyFrom();
  }
}

/** The CopyData message's type byte ('d'). */
const COPY_DATA = 0x64;

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

const COPY_USAGE_EVENTS = `
  COPY "UsageEvent" ("id", "orgId", "teamId", "userId", "keyId", "upstreamId", "toolName", "outcome", "costMicros", "inputTokens", "outputTokens", "latencyMs", "priceRuleId", "occurredAt", "traceId")
  FROM STDIN`;

const INSERT_USAGE_EVENTS = `
  INSERT INTO "UsageEvent" ("id", "orgId", "teamId", "userId", "keyId", "upstreamId", "toolName", "outcome", "costMicros", "inputTokens", "outputTokens", "latencyMs", "priceRuleId", "occurredAt", "traceId")
  SELECT * FROM unnest(
    $1::text[], $2::uuid[], $3::uuid[], $4::uuid[], $5::uuid[], $6::uuid[], $7::text[], $8::"UsageOutcome"[], $9::bigint[],
    $10::int[], $11::int[], $12::int[], $13::uuid[], $14::timestamp(3)[], $15::text[]
  )
  ON CONFLICT ("orgId", "occurredAt", "id") DO NOTHING`;

const INSERT_REFUSED_CALLS = `
  INSERT INTO "RefusedCall" ("id", "orgId", "teamId", "userId", "keyId", "upstreamId", "toolName", "code", "budgetId", "calls", "latencyMs", "occurredAt")
  SELECT * FROM unnest(
    $1::text[], $2::uuid[], $3::uuid[], $4::uuid[], $5::uuid[], $6::uuid[], $7::text[], $8::text[], $9::uuid[], $10::int[], $11::int[], $12::timestamp(3)[]
  )
  ON CONFLICT ("id", "occurredAt") DO NOTHING`;
