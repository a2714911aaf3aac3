import { Logger } from '@nestjs/common';
import { createHash, randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { AdmissionException, AdmissionExceptionCode } from './admission.exception';
import { COMPLETE_SCRIPT } from './admission-scripts';
import { BudgetLease } from './lease-kinds';

/** A usage event as the outbox stores it: the stream and the entry's field and value. */
export interface OutboxEntry {
  stream: string;
  fields: [string, string];
}

/** What one call's completion writes: a settlement (reserved calls), conversions (leased calls), a usage event. */
export interface CompletionWork {
  settlement: { budgetKeys: string[]; slotKeys: string[]; callId: string; actual: bigint } | null;
  conversions: { lease: BudgetLease; amount: bigint }[];
  usage: OutboxEntry | null;
}

/** What Redis answered for a lease's conversion: live (1), swept (0) or counter lost (-1), spent, leased. */
export type ConversionAnswer = [number, number, number];

interface Pending {
  work: CompletionWork;
  resolve: () => void;
  reject: (err: Error) => void;
}

/** Calls per script: a turn with more completions sends several scripts at once. */
const MAX_CALLS_PER_SCRIPT = 128;
/** Scripts per bitmap key of those run (8 KiB each); keys expire an hour after their last script. */
const SCRIPTS_PER_SEQ_KEY = 65_536;

/**
 * The completion step: every call completed in one turn of the event loop (collected until the
 * turn's check phase, `setImmediate`) is written in one script on a connection of its own, sent
 * at once: settlements, lease conversions and usage events together, all or nothing. Each call's
 * answer waits for Redis' acknowledgement, so an answered call is always billed and metered.
 */
export class CallCompletion {
  private readonly logger = new Logger(CallCompletion.name);
  private readonly sha = createHash('sha1').update(COMPLETE_SCRIPT).digest('hex');
  private readonly seqKey: string;
  private queue: Pending[] = [];
  private scheduled = false;
  private seq = 0;
  private readonly inFlight = new Set<Promise<unknown>>();

  /**
   * @param connection a connection without auto-pipelining, so a script leaves when it is sent
   * @param epochKey the deployment's epoch: gone when Redis lost its data
   * @param onConverted told what Redis answered for each lease conversion (or null if it failed)
   * @param onEpochLost told when a completion found the epoch gone
   */
  constructor(
    private readonly connection: Redis,
    keyPrefix: string,
    private readonly epochKey: string,
    private readonly onConverted: (lease: BudgetLease, amount: bigint, answer: ConversionAnswer | null) => void,
    private readonly onEpochLost: () => void,
  ) {
    // Each edge numbers its own scripts and marks each one run; a new process starts new keys.
    this.seqKey = `${keyPrefix}:completion:${randomBytes(6).toString('hex')}`;
  }

  /** Queues a call's completion for this turn's script; resolves once Redis has applied it. */
  complete(work: CompletionWork): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ work, resolve, reject });
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
    const all = this.queue;
    this.queue = [];
    for (let i = 0; i < all.length; i += MAX_CALLS_PER_SCRIPT) {
      const sent = this.send(all.slice(i, i + MAX_CALLS_PER_SCRIPT)).finally(() => this.inFlight.delete(sent));
      this.inFlight.add(sent);
    }
  }

  private async send(batch: Pending[]): Promise<void> {
    const seq = ++this.seq;
    const keys: string[] = [`${this.seqKey}:${Math.floor(seq / SCRIPTS_PER_SEQ_KEY)}`, '', this.epochKey];
    const settleArgs: (string | number)[] = [];
    const groupArgs: (string | number)[] = [];
    const eventArgs: string[] = [];
    let settlements = 0;
    let events = 0;
    // A lease's conversions of this turn go as one amount; leases grouped by organisation (one R each).
    const byLease = new Map<BudgetLease, bigint>();
    for (const { work } of batch) {
      if (work.settlement) {
        const s = work.settlement;
        keys.push(...s.budgetKeys, ...s.slotKeys);
        settleArgs.push(s.budgetKeys.length, s.slotKeys.length, s.callId, s.actual.toString());
        settlements++;
      }
      for (const c of work.conversions) byLease.set(c.lease, (byLease.get(c.lease) ?? 0n) + c.amount);
      if (work.usage) {
        keys[1] = work.usage.stream;
        eventArgs.push(...work.usage.fields);
        events++;
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
      keys.push(rKey, ...leases.map((l) => l.hKey));
      groupArgs.push(leases.length);
      for (const l of leases) {
        groupArgs.push(l.id, byLease.get(l)!.toString());
        order.push(l);
      }
    }
    if (!keys[1]) keys[1] = keys[0]; // no event in this batch: the stream key is not touched
    const args = [
      seq % SCRIPTS_PER_SEQ_KEY,
      settlements,
      groups.size,
      events,
      ...settleArgs,
      ...groupArgs,
      ...eventArgs,
    ];
    let res: number[];
    try {
      res = (await this.run(keys, args)) as number[];
    } catch (err) {
      for (const l of order) this.onConverted(l, byLease.get(l)!, null);
      const failure = new AdmissionException(
        AdmissionExceptionCode.CompletionNotRecorded,
        `Redis did not acknowledge the completion of ${batch.length} call(s): ${(err as Error).message}`,
      );
      this.logger.error(failure.message);
      for (const p of batch) p.reject(failure);
      return;
    }
    if (res[0] === 0) this.onEpochLost();
    // {2}: this script had already run (resent after a reconnect); its first answer was lost.
    order.forEach((l, j) =>
      this.onConverted(l, byLease.get(l)!, res[0] !== 2 ? (res.slice(1 + 3 * j, 4 + 3 * j) as ConversionAnswer) : null),
    );
    for (const p of batch) p.resolve();
  }

  private async run(keys: string[], args: (string | number)[]): Promise<unknown> {
    try {
      return await this.connection.evalsha(this.sha, keys.length, ...keys, ...args);
    } catch (err) {
      if (!(err instanceof Error) || !err.message.includes('NOSCRIPT')) throw err;
      return this.connection.eval(COMPLETE_SCRIPT, keys.length, ...keys, ...args);
    }
  }
}
