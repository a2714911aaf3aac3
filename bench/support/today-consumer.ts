/**
 * bench:ledger's "today": the usage outbox consumer as the worker ran it when issue 24 was filed
 * (daa4c21: apps/worker/src/processors/usage-ledger.consumer.ts and libs/metering's entry decode),
 * reduced to what a drain of a full backlog runs. One stream (edges wrote no shards then), one loop:
 * read up to LEDGER_BATCH_SIZE (500) entries, decode each with the zod payload schema, write them in
 * one statement, acknowledge and delete them in one MULTI, publish the notice, read the next. Nothing
 * of a batch overlaps the next one's read, decode or write. What is left out is the same for the
 * new path: the post-write alert-check requests, and the claim of idle entries after the first one
 * (every LEDGER_CLAIM_IDLE_MS / 2, longer than a drain).
 */
import { z } from 'zod';
import { Micros } from '@tollgate/kernel';
import {
  USAGE_DEAD_LETTER_MAX,
  USAGE_ENTRY_FIELD,
  USAGE_LEDGER_GROUP,
  USAGE_LEDGER_WRITTEN_CHANNEL,
  UsageEvent,
  UsageLedgerNotice,
  UsageOutboxKeys,
} from '@tollgate/usage';
import { duplicateRedisClient, RedisClient, RedisService } from '@tollgate/redis';

/** The payload as today's edge wrote it: money a decimal string, the time an ISO string. */
interface TodayPayload {
  id: string;
  orgId: string;
  teamId: string;
  userId: string;
  keyId: string;
  upstreamId: string;
  toolName: string;
  outcome: 'OK' | 'TOOL_ERROR' | 'UPSTREAM_ERROR';
  costMicros: string;
  inputTokens: number;
  outputTokens: number;
  latencyMs: number;
  priceRuleId: string | null;
  occurredAt: string;
}

// daa4c21's USAGE_EVENT_PAYLOAD_SCHEMA (libs/metering/src/usage-event.ts), as it was.
const id = z.string().min(1);
const uuid = z.string().uuid();
const int4 = z.number().int().min(-2_147_483_648).max(2_147_483_647);
const TODAY_PAYLOAD_SCHEMA = z.object({
  id,
  orgId: uuid,
  teamId: uuid,
  userId: uuid,
  keyId: uuid,
  upstreamId: uuid,
  toolName: id,
  outcome: z.enum(['OK', 'TOOL_ERROR', 'UPSTREAM_ERROR']),
  costMicros: z.string().regex(/^-?\d{1,18}$/, 'must be an integer number of micro-units'),
  inputTokens: int4.nonnegative(),
  outputTokens: int4.nonnegative(),
  latencyMs: int4,
  priceRuleId: uuid.nullable(),
  occurredAt: z.string().refine((s) => !Number.isNaN(Date.parse(s)), 'must be an ISO date-time'),
}) satisfies z.ZodType<TodayPayload>;

type TodayParsed = { event: UsageEvent; problem?: never } | { event?: never; problem: string };

/** daa4c21's parseUsageEntry: findIndex, JSON.parse, the schema, then fromPayload's spread. */
export function todayParseUsageEntry(fields: readonly string[]): TodayParsed & { eventId: string | null } {
  const i = fields.findIndex((f, n) => n % 2 === 0 && f === USAGE_ENTRY_FIELD);
  if (i < 0) return { problem: `the entry has no "${USAGE_ENTRY_FIELD}" field`, eventId: null };
  let payload: unknown;
  try {
    payload = JSON.parse(fields[i + 1]);
  } catch (err) {
    return { problem: `the "${USAGE_ENTRY_FIELD}" field is not JSON: ${(err as Error).message}`, eventId: null };
  }
  return { ...todayParseUsageEvent(payload), eventId: claimedEventId(payload) };
}

function todayParseUsageEvent(item: unknown): TodayParsed {
  const parsed = TODAY_PAYLOAD_SCHEMA.safeParse(item);
  if (parsed.success) {
    const p = parsed.data;
    return { event: { ...p, costMicros: BigInt(p.costMicros) as Micros, occurredAt: new Date(p.occurredAt) } };
  }
  return {
    problem: parsed.error.issues.map((issue) => `${issue.path.join('.') || 'event'} ${issue.message}`).join(', '),
  };
}

function claimedEventId(item: unknown): string | null {
  return typeof item === 'object' && item !== null && typeof (item as { id?: unknown }).id === 'string'
    ? (item as { id: string }).id
    : null;
}

type StreamEntry = [id: string, fields: string[] | null];

/** How an entry is decoded: today's zod schema (todayParseUsageEntry), or the current check (`parseUsageEntry`) for comparison. */
export type TodayDecode = (fields: readonly string[]) => TodayParsed & { eventId: string | null };

/**
 * Today's consumer on one stream (`keys`), writing through `write` (today's statement). `start`
 * joins the group and begins the loop; `stop` ends it after the batch in flight.
 */
export class TodayUsageConsumer {
  private conn: RedisClient | null = null;
  private loop: Promise<void> | null = null;
  private stopping = false;
  private writingBatch = false;
  private mayHavePending = true;
  readonly consumerName = `bench-today-${process.pid}-${Math.random().toString(16).slice(2, 10)}`;

  constructor(
    private readonly redis: RedisService,
    private readonly keys: UsageOutboxKeys,
    private readonly batchSize: number,
    private readonly write: (events: UsageEvent[]) => Promise<number>,
    private readonly decode: TodayDecode = todayParseUsageEntry,
  ) {}

  async start(): Promise<void> {
    this.conn = duplicateRedisClient(this.redis.client, { enableAutoPipelining: false });
    try {
      await this.conn.xgroup('CREATE', this.keys.events, USAGE_LEDGER_GROUP, '0', 'MKSTREAM');
    } catch (err) {
      if (!(err as Error).message.startsWith('BUSYGROUP')) throw err;
    }
    // Today's start-up claim of idle entries (none here: the group is new).
    await this.conn.xautoclaim(this.keys.events, USAGE_LEDGER_GROUP, this.consumerName, 60_000, '0-0', 'COUNT', 500);
    this.loop = this.drain();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    if (!this.writingBatch) this.conn?.disconnect();
    await this.loop;
    this.conn?.disconnect();
  }

  private async drain(): Promise<void> {
    while (!this.stopping) {
      try {
        const startedAt = Date.now();
        const read = await this.drainOnce();
        const gather = startedAt + 100 - Date.now();
        if (read > 0 && read < this.batchSize && gather > 0 && !this.stopping)
          await new Promise((resolve) => setTimeout(resolve, gather));
      } catch (err) {
        if (this.stopping) break;
        throw err;
      }
    }
  }

  private async drainOnce(): Promise<number> {
    let entries: StreamEntry[] = [];
    if (this.mayHavePending) {
      entries = await this.read('0');
      this.mayHavePending = entries.length >= this.batchSize;
    }
    if (entries.length === 0) entries = await this.read('>');
    if (entries.length === 0) return 0;
    this.writingBatch = true;
    try {
      await this.writeBatch(entries);
    } finally {
      this.writingBatch = false;
    }
    return entries.length;
  }

  private async read(from: '0' | '>'): Promise<StreamEntry[]> {
    const conn = this.conn!;
    const group = ['GROUP', USAGE_LEDGER_GROUP, this.consumerName, 'COUNT', this.batchSize] as const;
    const reply =
      from === '0'
        ? await conn.xreadgroup(...group, 'STREAMS', this.keys.events, from)
        : await conn.xreadgroup(...group, 'BLOCK', 1_000, 'STREAMS', this.keys.events, from);
    const streams = reply as [key: string, entries: StreamEntry[]][] | null;
    return streams?.[0]?.[1] ?? [];
  }

  private async writeBatch(entries: StreamEntry[]): Promise<void> {
    const events: UsageEvent[] = [];
    const dead: { entryId: string; eventId: string | null; reason: string; payload: string }[] = [];
    for (const [entryId, fields] of entries) {
      if (fields === null) continue;
      const parsed = this.decode(fields);
      if (parsed.event) events.push(parsed.event);
      else dead.push({ entryId, eventId: parsed.eventId, reason: parsed.problem, payload: JSON.stringify(fields) });
    }
    if (events.length > 0) await this.write(events);
    const ids = entries.map(([entryId]) => entryId);
    const tx = this.conn!.multi();
    for (const d of dead)
      tx.xadd(
        this.keys.dead,
        'MAXLEN',
        '~',
        USAGE_DEAD_LETTER_MAX,
        '*',
        'reason',
        d.reason,
        'entry',
        d.entryId,
        USAGE_ENTRY_FIELD,
        d.payload,
      );
    tx.xack(this.keys.events, USAGE_LEDGER_GROUP, ...ids);
    tx.xdel(this.keys.events, ...ids);
    const results = (await tx.exec()) ?? [];
    const failed = results.find(([err]) => err);
    if (failed) throw failed[0];
    const notice: UsageLedgerNotice = {
      written: events.map((e) => e.id),
      deadLettered: dead.flatMap((d) => (d.eventId ? [d.eventId] : [])),
      refused: [],
      trail: [],
    };
    void this.redis.publish(USAGE_LEDGER_WRITTEN_CHANNEL, JSON.stringify(notice)).catch(() => undefined);
  }
}
