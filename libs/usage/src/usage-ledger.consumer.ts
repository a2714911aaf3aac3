import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { TOLLGATE_CONFIG, WorkerConfig } from '@tollgate/config';
import { InvalidOutboxEntry, ParsedOutboxEntry, parseOutboxEntry } from './outbox-entry';
import {
  USAGE_DEAD_LETTER_MAX,
  USAGE_LEDGER_GROUP,
  USAGE_LEDGER_WRITTEN_CHANNEL,
  UsageLedgerNotice,
  allUsageOutboxKeys,
  UsageOutboxKeys,
} from './outbox-streams';
import { duplicateRedisClient, REDIS_SHARDS, RedisClient, RedisService } from '@tollgate/redis';
import { LedgerWriter } from './ledger-writer.service';

/** How long one read waits for new entries; also how often the loop looks at idle entries and shutdown. */
export const USAGE_READ_BLOCK_MS = 1_000;
/**
 * A batch that did not fill up is followed by a pause until this long after its read, so entries
 * gather into the next batch: under a steady trickle of calls the worker writes about ten batches a
 * second instead of one per call (each batch is an INSERT, a transaction and an alert-check request).
 */
export const USAGE_BATCH_INTERVAL_MS = 100;
/** A failed batch is retried after 1 s, then 2 s, 4 s ... up to 30 s. */
const RETRY_FIRST_MS = 1_000;
const RETRY_MAX_MS = 30_000;
/** A consumer with nothing pending and unseen for this long belonged to a worker that is gone. */
const STALE_CONSUMER_MS = 60 * 60_000;

type StreamEntry = [id: string, fields: string[] | null];

/** How much of the usage outbox is not in the ledger yet. */
export interface UsageOutboxBacklog {
  /** Entries no worker has read yet. */
  waiting: number;
  /** Entries read by a worker and not yet written (in flight, failing, or left by a dead worker). */
  pending: number;
  /** Entries in the dead-letter stream. */
  deadLettered: number;
}

/**
 * Drains the usage outbox into the ledger: one stream per virtual shard (and the stream from
 * before sharding), each with its own consumer group `ledger` and its own connection (see
 * OutboxStreamDrain). Every worker replica drains every stream under one consumer name.
 */
@Injectable()
export class UsageLedgerConsumer implements OnApplicationBootstrap, OnModuleDestroy {
  /** Unique per process, so a consumer's pending entries are only ever its own. */
  readonly consumerName = `${hostname()}-${process.pid}-${randomBytes(4).toString('hex')}`;
  private readonly drains: OutboxStreamDrain[];

  constructor(redis: RedisService, ledger: LedgerWriter, @Inject(TOLLGATE_CONFIG) config: WorkerConfig) {
    this.drains = allUsageOutboxKeys(redis.prefix, REDIS_SHARDS).map(
      (keys) =>
        new OutboxStreamDrain(
          redis,
          ledger,
          keys,
          config.worker.ledgerBatchSize,
          config.worker.ledgerClaimIdleMs,
          this.consumerName,
          config.worker.ledgerBatchesInFlight,
        ),
    );
  }

  async onApplicationBootstrap(): Promise<void> {
    await Promise.all(this.drains.map((d) => d.start()));
  }

  async onModuleDestroy(): Promise<void> {
    await Promise.all(this.drains.map((d) => d.stop()));
  }

  /** How long the oldest usage event not yet in the ledger, in any stream, has waited (0: none waits). */
  async oldestWaitingMs(now = Date.now()): Promise<number> {
    return Math.max(0, ...(await Promise.all(this.drains.map((d) => d.oldestWaitingMs(now)))));
  }

  /** The outbox backlog over every stream, from XINFO GROUPS (for metrics). */
  async backlog(): Promise<UsageOutboxBacklog> {
    const all = await Promise.all(this.drains.map((d) => d.backlog()));
    return all.reduce(
      (sum, b) => ({
        waiting: sum.waiting + b.waiting,
        pending: sum.pending + b.pending,
        deadLettered: sum.deadLettered + b.deadLettered,
      }),
      { waiting: 0, pending: 0, deadLettered: 0 },
    );
  }
}

/**
 * Drains one usage outbox stream into the ledger, in batches of up to `LEDGER_BATCH_SIZE` events,
 * one INSERT each. Every worker replica joins the stream's consumer group `ledger` under a name of
 * its own, so each entry is read by one of them; an entry is acknowledged and deleted only after
 * its batch is in Postgres, and the INSERT ignores an event id already there, so an entry read
 * twice (a worker died between writing and acknowledging, or its entries were taken over) is
 * written once. Entries a stopped worker left unacknowledged for `LEDGER_CLAIM_IDLE_MS` are taken
 * over (XAUTOCLAIM). An entry that is not a valid usage event goes to the stream's dead-letter
 * stream (same hash tag) with the reason, so it never blocks the others.
 *
 * Blocking reads use a connection of their own: on the shared auto-pipelined one they would hold
 * back every other command for up to a second (and on Redis Cluster, every command to that node).
 */
class OutboxStreamDrain {
  private readonly logger = new Logger(UsageLedgerConsumer.name);
  private conn: RedisClient | null = null;
  private loop: Promise<void> | null = null;
  private stopping = false;
  /**
   * Batches being written and acknowledged (at most `batchesInFlight`): shutdown lets them finish;
   * anything else it cuts short. The first one's failure, until the loop has seen it.
   */
  private readonly inFlight = new Set<Promise<void>>();
  private failed: { err: unknown } | null = null;
  /** Ends a retry back-off early (shutdown). */
  private wake: (() => void) | null = null;
  private groupReady = false;
  /** False once a read of our own pending entries came back short: until a failure or a take-over. */
  private mayHavePending = true;
  private nextClaimAt = 0;

  constructor(
    private readonly redis: RedisService,
    private readonly ledger: LedgerWriter,
    private readonly keys: UsageOutboxKeys,
    private readonly batchSize: number,
    private readonly claimIdleMs: number,
    private readonly consumerName: string,
    private readonly batchesInFlight: number,
  ) {}

  async start(): Promise<void> {
    const conn = duplicateRedisClient(this.redis.client, { enableAutoPipelining: false });
    conn.on('error', (err: Error) => this.logger.warn(`usage outbox connection: ${err.message}`));
    this.conn = conn;
    await this.ensureGroup();
    // Entries a stopped worker left are taken over before the first read (this also joins the group).
    await this.claimIdleEntries();
    this.loop = this.drain();
  }

  /**
   * Before the queues and the database close (their hooks run at application shutdown): stop
   * reading, let the batch in flight finish, leave the group if nothing is pending.
   */
  async stop(): Promise<void> {
    this.stopping = true;
    this.wake?.();
    // Closing the connection ends a blocking read (or a claim, or a read waiting on Redis) at once;
    // nothing read is lost, it stays pending. A batch being written needs it to acknowledge.
    if (this.inFlight.size === 0) this.conn?.disconnect();
    await this.loop;
    if (this.conn?.status === 'ready') await this.conn.quit().catch(() => undefined);
    else this.conn?.disconnect();
    await this.leaveGroup();
  }

  /** How long the oldest usage event not yet in the ledger has waited (0: none waits). Written entries are deleted. */
  async oldestWaitingMs(now = Date.now()): Promise<number> {
    const [first] = await this.redis.client.xrange(this.keys.events, '-', '+', 'COUNT', 1);
    return first ? Math.max(0, now - Number(first[0].split('-')[0])) : 0;
  }

  /** This stream's backlog, from XINFO GROUPS. */
  async backlog(): Promise<UsageOutboxBacklog> {
    const [groups, length, deadLettered] = await Promise.all([
      this.redis.client.call('XINFO', 'GROUPS', this.keys.events).catch(noSuchKey([])),
      this.redis.client.xlen(this.keys.events),
      this.redis.client.xlen(this.keys.dead),
    ]);
    const group = (groups as unknown[]).map(fieldsOf).find((g) => g.name === USAGE_LEDGER_GROUP);
    const pending = Number(group?.pending ?? 0);
    // Entries are deleted once written, so everything in the stream not pending is waiting; Redis
    // leaves `lag` null when it cannot tell.
    const waiting = typeof group?.lag === 'number' ? group.lag : Math.max(0, length - pending);
    return { waiting, pending, deadLettered };
  }

  /**
   * Start id 0: the group then delivers every entry already in the stream. Edges can add entries
   * before any worker has created the group (a new deployment, or the stream was lost and an edge
   * re-created it); `$` would skip those forever. Entries are deleted once written, so 0 never
   * replays the ledger. An existing group (BUSYGROUP) keeps its position.
   */
  private async ensureGroup(): Promise<void> {
    try {
      await this.connection().xgroup('CREATE', this.keys.events, USAGE_LEDGER_GROUP, '0', 'MKSTREAM');
    } catch (err) {
      if (!(err as Error).message.startsWith('BUSYGROUP')) throw err;
    }
    this.groupReady = true;
  }

  private async drain(): Promise<void> {
    let retryMs = RETRY_FIRST_MS;
    while (!this.stopping) {
      try {
        const startedAt = Date.now();
        const read = await this.drainOnce();
        retryMs = RETRY_FIRST_MS;
        const gather = startedAt + USAGE_BATCH_INTERVAL_MS - Date.now();
        if (read > 0 && read < this.batchSize && gather > 0 && !this.stopping) await this.pause(gather);
      } catch (err) {
        // Whatever else was in flight finishes first (written and acknowledged, or left pending: the
        // retry reads those again, so their failures are this one's).
        await this.settled();
        this.failed = null;
        if (this.stopping) break;
        const message = (err as Error).message;
        this.logger.error(`usage ledger batch not written, retrying in ${retryMs} ms: ${message}`);
        // The stream was deleted (and maybe re-created by an edge): create the group again.
        if (message.startsWith('NOGROUP')) this.groupReady = false;
        this.mayHavePending = true;
        await this.pause(retryMs);
        retryMs = Math.min(retryMs * 2, RETRY_MAX_MS);
      }
    }
    await this.settled();
  }

  /**
   * One batch read and decoded: our own pending entries first (a failed batch, or taken over), else
   * new ones; its write and acknowledgement then run while the next batch is read and decoded, up
   * to `batchesInFlight` batches at once (each acknowledged after its own INSERT committed; the
   * INSERT ignores an event id already there). Pending entries are only read, and idle ones only
   * taken over, with nothing in flight: those in flight are pending too. Returns how many entries
   * it read.
   */
  private async drainOnce(): Promise<number> {
    this.throwIfFailed();
    if (!this.groupReady) await this.ensureGroup();
    if (Date.now() >= this.nextClaimAt) {
      await this.idle();
      await this.claimIdleEntries();
    }
    let entries: StreamEntry[] = [];
    if (this.mayHavePending) {
      await this.idle();
      entries = await this.read('0');
      this.mayHavePending = entries.length >= this.batchSize;
    }
    // A blocking read would hold back the acknowledgements in flight on this connection.
    if (entries.length === 0) entries = await this.read(this.inFlight.size > 0 ? 'next' : '>');
    if (entries.length === 0) {
      await this.idle();
      return 0;
    }
    const batch = decodeBatch(entries);
    while (this.inFlight.size >= this.batchesInFlight) await Promise.race(this.inFlight);
    this.throwIfFailed();
    const writing: Promise<void> = this.writeBatch(batch)
      .catch((err: unknown) => {
        this.failed ??= { err };
      })
      .finally(() => this.inFlight.delete(writing));
    this.inFlight.add(writing);
    return entries.length;
  }

  /** Waits for every batch in flight; throws the first failure among them. */
  private async idle(): Promise<void> {
    await this.settled();
    this.throwIfFailed();
  }

  /** Waits for every batch in flight (their failures are kept for throwIfFailed). */
  private async settled(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all(this.inFlight);
  }

  private throwIfFailed(): void {
    const failed = this.failed;
    this.failed = null;
    if (failed) throw failed.err;
  }

  /**
   * `0`: this consumer's pending entries, at once; `>`: new entries, waiting up to
   * USAGE_READ_BLOCK_MS; `next`: new entries, at once.
   */
  private async read(from: '0' | '>' | 'next'): Promise<StreamEntry[]> {
    const conn = this.connection();
    const group = ['GROUP', USAGE_LEDGER_GROUP, this.consumerName, 'COUNT', this.batchSize] as const;
    if (from !== '>')
      return streamEntries(await conn.xreadgroup(...group, 'STREAMS', this.keys.events, from === '0' ? '0' : '>'));
    return streamEntries(
      await conn.xreadgroup(...group, 'BLOCK', USAGE_READ_BLOCK_MS, 'STREAMS', this.keys.events, from),
    );
  }

  /**
   * Valid events in one INSERT; invalid entries to the dead-letter stream; then all of them
   * acknowledged and deleted in one transaction. A failed INSERT throws before anything is
   * acknowledged, so the same entries are read again (as pending) after the back-off; unless
   * Postgres refused the data itself (see writeIsolating).
   */
  private async writeBatch({ entries, parsed, dead }: DecodedBatch): Promise<void> {
    const written = await this.writeIsolating(parsed, dead);
    const events = written.flatMap((w) => (w.entry.event ? [w.entry.event] : []));
    const refusals = written.flatMap((w) => (w.entry.refusal ? [w.entry.refusal] : []));
    const trail = written.flatMap((w) => w.entry.trail ?? []);

    const ids = entries.map(([id]) => id);
    // Dead letters first, then the acknowledgement (one key, one slot): a crash between them
    // dead-letters an entry twice, never loses one.
    const conn = this.connection();
    for (const d of dead) {
      await conn.xadd(
        this.keys.dead,
        'MAXLEN',
        '~',
        USAGE_DEAD_LETTER_MAX,
        '*',
        'reason',
        d.reason,
        'entry',
        d.entryId,
        d.field,
        d.payload,
      );
    }
    const tx = conn.multi();
    tx.xack(this.keys.events, USAGE_LEDGER_GROUP, ...ids);
    tx.xdel(this.keys.events, ...ids);
    const results = (await tx.exec()) ?? [];
    const failed = results.find(([err]) => err);
    if (failed) throw failed[0];

    if (dead.length > 0) {
      const shown = dead
        .slice(0, 5)
        .map((d) => `entry ${d.entryId}${d.claimedId ? ` (event ${d.claimedId})` : ''}: ${d.reason}`);
      this.logger.error(
        `${dead.length} usage outbox entries are not valid usage events, moved to ${this.keys.dead}: ${shown.join('; ')}${dead.length > 5 ? '; ...' : ''}`,
      );
    }
    const notice: UsageLedgerNotice = {
      written: events.map((e) => e.id),
      deadLettered: dead.flatMap((d) => (d.claimedId ? [d.claimedId] : [])),
      refused: refusals.map((r) => r.id),
      trail: trail.map((t) => t.id),
    };
    this.redis
      .publish(USAGE_LEDGER_WRITTEN_CHANNEL, JSON.stringify(notice))
      .catch((err: Error) => this.logger.warn(`usage ledger notice not published: ${err.message}`));
  }

  /**
   * Writes the entries, and returns those written. If Postgres refuses the batch's data itself
   * (SQLSTATE class 22 or 23: a value no column takes, a row no partition holds), retrying would
   * fail forever and hold back every entry of the stream behind it; so the entries are written one
   * by one, and each one refused is dead-lettered with Postgres' reason. Any other failure (Postgres
   * down, a lost connection) throws, and the batch is retried whole.
   */
  private async writeIsolating(parsed: ReadEntry[], dead: DeadEntry[]): Promise<ReadEntry[]> {
    try {
      await this.writeEntries(parsed);
      return parsed;
    } catch (err) {
      if (!isDataError(err) || parsed.length === 0) throw err;
      this.logger.warn(
        `usage ledger batch refused by Postgres (${(err as Error).message}): writing its entries one by one`,
      );
    }
    const written: ReadEntry[] = [];
    for (const one of parsed) {
      try {
        await this.writeEntries([one]);
        written.push(one);
      } catch (err) {
        if (!isDataError(err)) throw err;
        dead.push(refusedEntry(one, (err as Error).message));
      }
    }
    return written;
  }

  private async writeEntries(parsed: ReadEntry[]): Promise<void> {
    await this.ledger.write(parsed.flatMap((p) => (p.entry.event ? [p.entry.event] : [])));
    await this.ledger.writeRefusals(parsed.flatMap((p) => (p.entry.refusal ? [p.entry.refusal] : [])));
    await this.ledger.writeTrail(parsed.flatMap((p) => p.entry.trail ?? []));
  }

  /**
   * Takes over entries any consumer (a worker that died, or is stuck) has held unacknowledged for
   * LEDGER_CLAIM_IDLE_MS, into this consumer's pending list, which the next reads work through.
   * Runs at start and then every half of that idle time.
   */
  private async claimIdleEntries(): Promise<void> {
    this.nextClaimAt = Date.now() + Math.max(this.claimIdleMs / 2, 25);
    const conn = this.connection();
    let cursor = '0-0';
    let claimed = 0;
    do {
      const [next, ids] = (await conn.xautoclaim(
        this.keys.events,
        USAGE_LEDGER_GROUP,
        this.consumerName,
        this.claimIdleMs,
        cursor,
        'COUNT',
        this.batchSize,
        'JUSTID',
      )) as [string, string[]];
      claimed += ids.length;
      cursor = next;
    } while (cursor !== '0-0' && !this.stopping);
    if (claimed > 0) {
      this.mayHavePending = true;
      this.logger.warn(`claimed ${claimed} usage outbox entries left unacknowledged for over ${this.claimIdleMs} ms`);
    }
    await this.forgetStaleConsumers();
  }

  /** Workers that crashed leave their consumer behind in the group; drop those with nothing pending. */
  private async forgetStaleConsumers(): Promise<void> {
    const conn = this.connection();
    const consumers = ((await conn.call('XINFO', 'CONSUMERS', this.keys.events, USAGE_LEDGER_GROUP)) as unknown[]).map(
      fieldsOf,
    );
    for (const c of consumers) {
      if (c.name !== this.consumerName && Number(c.pending) === 0 && Number(c.idle) > STALE_CONSUMER_MS) {
        await conn.xgroup('DELCONSUMER', this.keys.events, USAGE_LEDGER_GROUP, String(c.name));
      }
    }
  }

  /** A stopped consumer with nothing pending leaves the group, so XINFO lists only live ones. */
  private async leaveGroup(): Promise<void> {
    try {
      const consumers = (
        (await this.redis.client.call('XINFO', 'CONSUMERS', this.keys.events, USAGE_LEDGER_GROUP)) as unknown[]
      ).map(fieldsOf);
      const own = consumers.find((c) => c.name === this.consumerName);
      if (own && Number(own.pending) === 0)
        await this.redis.client.xgroup('DELCONSUMER', this.keys.events, USAGE_LEDGER_GROUP, this.consumerName);
    } catch (err) {
      // Leaving is tidiness only: a consumer left behind is dropped by another worker later.
      this.logger.warn(`usage outbox consumer ${this.consumerName} not removed: ${(err as Error).message}`);
    }
  }

  private pause(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wake = null;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wake = done;
    });
  }

  private connection(): RedisClient {
    if (!this.conn) throw new Error('usage ledger consumer not started');
    return this.conn;
  }
}

/** An outbox entry read and decoded (it holds something to write). */
interface ReadEntry {
  entryId: string;
  fields: string[];
  entry: ParsedOutboxEntry;
}

type DeadEntry = InvalidOutboxEntry & { entryId: string };

/** A batch as read: every entry (to acknowledge), those holding something to write, and dead letters. */
interface DecodedBatch {
  entries: StreamEntry[];
  parsed: ReadEntry[];
  dead: DeadEntry[];
}

function decodeBatch(entries: StreamEntry[]): DecodedBatch {
  const parsed: ReadEntry[] = [];
  const dead: DeadEntry[] = [];
  for (const [entryId, fields] of entries) {
    // Deleted from the stream while pending (by hand): nothing left to write, only to acknowledge.
    if (fields === null) continue;
    // A trail event or a refused call (each its own entry kind and table), a usage event, or a dead letter.
    const entry = parseOutboxEntry(fields);
    if (entry.invalid) dead.push({ entryId, ...entry.invalid });
    if (!entry.invalid || entry.trail) parsed.push({ entryId, fields, entry });
  }
  return { entries, parsed, dead };
}

/** Postgres refused the data (data exception, or an integrity constraint such as a missing partition). */
function isDataError(err: unknown): boolean {
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' && /^2[23]/.test(code);
}

/** A decoded entry Postgres would not take, as the dead-letter stream keeps it. */
function refusedEntry({ entryId, fields, entry }: ReadEntry, message: string): DeadEntry {
  const claimedId = entry.event?.id ?? entry.refusal?.id ?? entry.trail?.[0]?.id ?? null;
  return {
    entryId,
    reason: `Postgres refused it: ${message}`,
    claimedId,
    field: fields[0] ?? '',
    payload: fields[1] ?? '',
  };
}

function streamEntries(reply: unknown): StreamEntry[] {
  const streams = reply as [key: string, entries: StreamEntry[]][] | null;
  return streams?.[0]?.[1] ?? [];
}

/** XINFO replies come as flat `[name, value, ...]` lists. */
function fieldsOf(item: unknown): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (Array.isArray(item)) for (let i = 0; i + 1 < item.length; i += 2) out[String(item[i])] = item[i + 1];
  else if (item && typeof item === 'object') Object.assign(out, item);
  return out;
}

function noSuchKey<T>(fallback: T): (err: Error) => T {
  return (err) => {
    if (/no such key/i.test(err.message)) return fallback;
    throw err;
  };
}
