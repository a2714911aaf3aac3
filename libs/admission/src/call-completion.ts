import { Logger } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import type { UsageOutboxEntry } from '@tollgate/usage';
import { evalWithReplicaWait, type RedisClient, type ReplicaWait } from '@tollgate/redis';
import { redisEpochKey, shardKey, shardOf } from '@tollgate/redis';
import { AdmissionException, AdmissionExceptionCode } from './admission.exception';
import { COMPLETE_CALLS, CompleteCallsInput, CompleteCallsResult, ConversionAnswer } from './admission-scripts';
import { BudgetLease } from './lease-kinds';

/** What one call's completion writes: a settlement (reserved calls), conversions (leased calls), a usage event. */
export interface CompletionWork {
  /** The organisation: a script carries one organisation's completions, in its shard's slot. */
  orgId: string;
  /** The call (or, for a release, the call freed): its reservation to settle, named in the log line of a failure. */
  callId: string;
  settlement: { budgetKeys: string[]; slotKeys: string[]; actual: bigint } | null;
  conversions: { lease: BudgetLease; amount: bigint }[];
  usage: UsageOutboxEntry | null;
}

interface Pending {
  work: CompletionWork;
  /** What the call's promise resolves with once Redis has applied its completion. */
  answer: unknown;
  resolve: (answer: unknown) => void;
  reject: (err: Error) => void;
}

/** Calls per script: a turn with more completions sends several scripts at once. */
const MAX_CALLS_PER_SCRIPT = 128;
/** Scripts per bitmap key of those run (8 KiB each); keys expire an hour after their last script. */
const SCRIPTS_PER_SEQ_KEY = 65_536;

/**
 * The completion step: the calls of one organisation completed in one turn of the event loop
 * (collected until the turn's check phase, `setImmediate`) are written in one script on a
 * connection of its own, sent at once: settlements, lease conversions and usage events together.
 * The script checks everything before its first write, so it either refuses having written
 * nothing or completes; a failure touches only that organisation's calls of the turn. Each call's
 * answer waits for Redis' acknowledgement, so an answered call is always billed and metered.
 */
export class CallCompletion {
  private readonly logger = new Logger(CallCompletion.name);
  private readonly seqKey: string;
  /** Scripts whose replica wait ended with fewer replicas than asked (the timeout passed). */
  replicaWaitShortfalls = 0;
  private queue: Pending[] = [];
  private scheduled = false;
  private seq = 0;
  private readonly inFlight = new Set<Promise<unknown>>();

  /**
   * @param connection a connection without auto-pipelining, so a script leaves when it is sent
   * @param keyPrefix the deployment's Redis prefix (epochs, completion bitmaps: one per shard)
   * @param onConverted told what Redis answered for each lease conversion (or null if it failed)
   * @param onEpochLost told when a completion found the epoch gone
   */
  constructor(
    private readonly connection: RedisClient,
    private readonly keyPrefix: string,
    private readonly onConverted: (lease: BudgetLease, amount: bigint, answer: ConversionAnswer | null) => void,
    private readonly onEpochLost: () => void,
    /** Opt-in: wait for this many replicas after each script (null: answer once the primary has it). */
    private readonly replicaWait: ReplicaWait | null = null,
  ) {
    // Each edge numbers its own scripts and marks each one run (per shard); a new process starts new keys.
    this.seqKey = randomBytes(6).toString('hex');
  }

  /**
   * Queues a call's completion for this turn's script; resolves with `answer` once Redis has
   * applied it (the caller's own result, so it needs no promise of its own to hand it on).
   */
  complete<T = void>(work: CompletionWork, answer?: T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ work, answer, resolve: resolve as (answer: unknown) => void, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  /** Resolves once every completion queued so far has been answered (for tests and shutdown). */
  async settled(): Promise<void> {
    if (this.scheduled) await new Promise((resolve) => setImmediate(resolve));
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  private flush(): void {
    this.scheduled = false;
    const byOrg = new Map<string, Pending[]>();
    for (const p of this.queue) {
      const list = byOrg.get(p.work.orgId);
      if (list) list.push(p);
      else byOrg.set(p.work.orgId, [p]);
    }
    this.queue = [];
    for (const [orgId, all] of byOrg) {
      for (let i = 0; i < all.length; i += MAX_CALLS_PER_SCRIPT) {
        const sent = this.send(orgId, all.slice(i, i + MAX_CALLS_PER_SCRIPT)).finally(() => this.inFlight.delete(sent));
        this.inFlight.add(sent);
      }
    }
  }

  private async send(orgId: string, batch: Pending[]): Promise<void> {
    const seq = ++this.seq;
    const shard = shardOf(orgId);
    const input: CompleteCallsInput = {
      bitmapKey: shardKey(
        this.keyPrefix,
        shard,
        'completion',
        this.seqKey,
        String(Math.floor(seq / SCRIPTS_PER_SEQ_KEY)),
      ),
      bit: seq % SCRIPTS_PER_SEQ_KEY,
      outboxKey: null,
      epochKey: redisEpochKey(this.keyPrefix, shard),
      settlements: [],
      conversions: [],
      events: [],
    };
    // A lease's conversions of this turn go as one amount; leases grouped by their records (one R each).
    const byLease = new Map<BudgetLease, bigint>();
    for (const { work } of batch) {
      if (work.settlement) input.settlements.push({ callId: work.callId, ...work.settlement });
      for (const c of work.conversions) byLease.set(c.lease, (byLease.get(c.lease) ?? 0n) + c.amount);
      if (work.usage) {
        input.outboxKey = work.usage.stream;
        input.events.push(work.usage.fields);
      }
    }
    const groups = new Map<string, BudgetLease[]>();
    for (const lease of byLease.keys()) {
      const g = groups.get(lease.rKey);
      if (g) g.push(lease);
      else groups.set(lease.rKey, [lease]);
    }
    const order: BudgetLease[] = [];
    for (const [rKey, leases] of groups) {
      input.conversions.push({
        rKey,
        leases: leases.map((l) => ({ id: l.id, counterKey: l.hKey, amount: byLease.get(l)! })),
      });
      order.push(...leases);
    }
    let res: CompleteCallsResult;
    try {
      res = await this.run(input);
    } catch (err) {
      for (const l of order) this.onConverted(l, byLease.get(l)!, null);
      // The detail (a Redis error, a script's refusal) goes to the log, named by call id; callers get a stable code.
      this.logger.error(
        `completion of ${batch.length} call(s) of org ${orgId} not recorded (calls ${batch.map((p) => p.work.callId).join(', ')}): ${(err as Error).message}`,
      );
      for (const p of batch)
        p.reject(
          new AdmissionException(
            AdmissionExceptionCode.CompletionNotRecorded,
            `Redis did not acknowledge the completion of call ${p.work.callId}`,
            p.work.callId,
          ),
        );
      return;
    }
    if (res.kind === 'applied' && res.epochLost) this.onEpochLost();
    // Already run (resent after a reconnect): its first answer, with the conversions', was lost.
    order.forEach((l, j) => this.onConverted(l, byLease.get(l)!, res.kind === 'applied' ? res.conversions[j] : null));
    for (const p of batch) p.resolve(p.answer);
  }

  private async run(input: CompleteCallsInput): Promise<CompleteCallsResult> {
    const { keys, args } = COMPLETE_CALLS.encode(input);
    const { result, replicas } = await evalWithReplicaWait(
      this.connection,
      COMPLETE_CALLS.script,
      keys,
      args,
      this.replicaWait,
    );
    // Opt-in (REDIS_COMPLETION_WAIT_REPLICAS): the calls are applied either way; a short count
    // only means a failover now could lose them (docs/architecture.md "What a failover loses").
    if (this.replicaWait && replicas !== null && replicas < this.replicaWait.replicas) {
      this.replicaWaitShortfalls++;
      this.logger.warn(
        `completion acknowledged by ${replicas} of ${this.replicaWait.replicas} replica(s) within ${this.replicaWait.timeoutMs} ms`,
      );
    }
    return COMPLETE_CALLS.decode(result, input);
  }
}
