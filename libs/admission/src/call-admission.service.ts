import { Inject, Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import {
  BudgetService,
  BudgetStanding,
  COUNTER_CORRUPT_CHANNEL,
  ReservationPlan,
  SpendReservation,
  SpendScopes,
} from '@tollgate/budget';
import { Micros, ToolRef, unavailableDependency } from '@tollgate/kernel';
import type { UsageOutboxEntry } from '@tollgate/usage';
import { AdmissionPlan, RateLimitCaller, RateLimitRefusal, RateLimitService } from '@tollgate/rate-limit';
import { ALL_SHARDS, duplicateRedisClient, RedisClient, RedisService, redisEpochKey, shardOf } from '@tollgate/redis';
import { AdmissionException, AdmissionExceptionCode } from './admission.exception';
import { SYSTEM_CLOCK } from './admission-clock';
import { AdmissionLeases } from './admission-leases';
import { ADMIT_AND_RESERVE, EXTEND_HOLD } from './admission-scripts';
import { ADMISSION_SETTINGS, AdmissionSettings } from './admission-settings';
import { CallCompletion, CompletionWork } from './call-completion';
import { HoldRenewal } from './hold-renewal';
import { LeasedCall, LeaseRequest } from './lease-kinds';

export type CallAdmission =
  | { ok: true; hold: CallHold }
  | { ok: false; rateLimited: RateLimitRefusal }
  | { ok: false; budgetExceeded: { exceeded: BudgetStanding; requestedMicros: Micros } }
  /**
   * Redis lost its data (the deployment epoch is gone: `data-lost`), or a budget counter of the
   * call holds a field that is not an integer (`counter-corrupt`): nothing is admitted on it until
   * the worker rebuilds it from the ledger.
   */
  | { ok: false; countersUnavailable: { retryAfterMs: number; reason: 'data-lost' | 'counter-corrupt' } };

/** How long an agent is told to wait while the worker rebuilds counters after Redis lost its data. */
export const COUNTERS_REBUILD_RETRY_MS = 5_000;
/**
 * How long an agent is told to wait on a corrupt counter: the edge asks the worker to rebuild it
 * at once (COUNTER_CORRUPT_CHANNEL), which takes a reconciliation of one organisation.
 */
export const CORRUPT_COUNTER_RETRY_MS = 10_000;
/** An edge asks again for an organisation's rebuild at most this often (every refused call would ask). */
const REBUILD_ASK_EVERY_MS = 2_000;

/**
 * How a call is admitted. `unleased`: never against this edge's leases, always in Redis, for a
 * call that may become a task (its hold is then handed over to whichever edge settles it, and its
 * deadline pushed out with extendHold). Its deadline is any call's until then.
 */
export interface AdmitOptions {
  unleased?: boolean;
}

/** What an admitted call holds until it completes: its lease share, or its reservation and concurrency slots. */
export interface CallHold {
  reservation: SpendReservation;
  estimate: Micros;
  /** The budgets as the reservation left them (this call's estimate reserved); empty under leases. */
  standings: BudgetStanding[];
  admission: AdmissionPlan | null;
  /** Set when the call was admitted against this edge's leases, without a round trip. */
  leased: LeasedCall | null;
  /** Set by the first `complete`: a hold settles once (a second settlement would charge twice). */
  completed: boolean;
  /**
   * Set when this edge's renewal found part of the hold gone from Redis (swept: the edge stalled
   * past its deadline, or Redis lost its data): it is no longer renewed. Nothing on the call path
   * reads it (the call still settles: its cost is charged without the reservation); it says what
   * became of the hold (the money model compares it).
   */
  lapsed?: true;
}

/**
 * A governed call's admission and completion. Far from every limit, calls are admitted against
 * this edge's leases (AdmissionLeases) with no round trip. Otherwise, before the upstream, rate
 * limits and budget reservation run in one script (one round trip, all or nothing). After the
 * upstream, the completion step (CallCompletion) writes the settlement and the usage event in one
 * script per turn of the event loop, and the answer waits for it. The scripts are the rate-limit
 * and budget libraries' own Lua functions, run together. While a call admitted in Redis runs, this
 * edge renews its hold (HoldRenewal), so only a dead edge's holds are ever swept.
 */
@Injectable()
export class CallAdmissionService implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(CallAdmissionService.name);
  /** Completions go on a connection of their own, without auto-pipelining: each script leaves at once. */
  private readonly connection: RedisClient;
  private readonly completion: CallCompletion;
  private readonly renewal: HoldRenewal;
  /** When this edge last asked for each organisation's corrupt counter to be rebuilt. */
  private readonly rebuildAsked = new Map<string, number>();

  constructor(
    private readonly redis: RedisService,
    private readonly rateLimits: RateLimitService,
    private readonly budgets: BudgetService,
    private readonly leases: AdmissionLeases,
    @Inject(ADMISSION_SETTINGS) private readonly settings: AdmissionSettings,
  ) {
    this.connection = duplicateRedisClient(redis.client, { enableAutoPipelining: false });
    this.connection.on('error', (err) => this.logger.warn(`redis (completions) error: ${err.message}`));
    const epochLost = () => leases.dropAll('Redis lost its data (the deployment epoch is gone)');
    this.completion = new CallCompletion(
      this.connection,
      redis.prefix,
      (lease, amount, answer) => leases.converted(lease, amount, answer),
      epochLost,
      settings.completionWait && settings.completionWait.replicas > 0 ? settings.completionWait : null,
    );
    this.renewal = new HoldRenewal(settings.clock ?? SYSTEM_CLOCK, settings.reservationTtlMs, (hold, until, now) =>
      this.extendHold(hold, until, now),
    );
  }

  onModuleInit(): void {
    this.renewal.start();
  }

  /**
   * Rate limits and budgets for one call: against this edge's leases, or in one round trip.
   * `tool` null: budgets only (a page read of a result, which calls no upstream).
   */
  // Not async: it hands on admitOrThrow's promise (an async wrapper would add a promise and its turns).
  admit(
    caller: RateLimitCaller & SpendScopes,
    tool: ToolRef | null,
    callId: string,
    estimate: Micros,
    now: number,
    options: AdmitOptions = {},
  ): Promise<CallAdmission> {
    return this.admitOrThrow(caller, tool, callId, estimate, now, options).catch((err: unknown) => {
      // Redis or Postgres down: the caller answers 503 with a retry hint. Anything else (a script
      // error) is logged in full here, and the agent sees a stable code and the call id.
      if (err instanceof AdmissionException || unavailableDependency(err)) throw err;
      this.logger.error(`call ${callId}: admission failed (nothing run or charged): ${(err as Error).message}`);
      throw new AdmissionException(
        AdmissionExceptionCode.AdmissionFailed,
        `Internal error: call ${callId} could not be admitted (nothing was run or charged)`,
        callId,
      );
    });
  }

  private async admitOrThrow(
    caller: RateLimitCaller & SpendScopes,
    tool: ToolRef | null,
    callId: string,
    estimate: Micros,
    now: number,
    options: AdmitOptions,
  ): Promise<CallAdmission> {
    const deadline = now + this.settings.reservationTtlMs;
    const admissionPlan = tool ? this.rateLimits.planAdmission(caller, tool, callId, now, deadline) : null;
    const reservationPlan = this.budgets.planReservation(caller, callId, estimate, new Date(now), deadline);
    // Nearly every call finds the organisation's limits cached, and its plans come without a promise.
    const [admission, reservation] =
      admissionPlan instanceof Promise || reservationPlan instanceof Promise
        ? await Promise.all([admissionPlan, reservationPlan])
        : [admissionPlan, reservationPlan];
    const hold: CallHold = {
      reservation: reservation.reservation,
      estimate,
      standings: [],
      admission,
      leased: null,
      completed: false,
    };
    if (!admission && reservation.reservation.budgets.length === 0) return { ok: true, hold };
    const lease =
      this.leases.enabled && !options.unleased
        ? leaseRequest(
            caller.orgId,
            this.budgets.recordKeys(caller.orgId),
            reservation.reservation,
            admission,
            estimate,
          )
        : null;
    const leased = lease && this.leases.admit(lease, now);
    hold.leased = leased instanceof Promise ? await leased : leased;
    if (hold.leased) return { ok: true, hold };

    let outcome = await this.admitInRedis(admission, reservation);
    // Refused in Redis while this edge holds unused allowance on the call's limits: give it back and ask again.
    if (
      lease &&
      outcome !== EPOCH_LOST &&
      !('reservation' in outcome) &&
      (await this.leases.giveBack(lease, (this.settings.clock ?? SYSTEM_CLOCK).now()))
    )
      outcome = await this.admitInRedis(admission, reservation);
    if (outcome === EPOCH_LOST) {
      this.leases.dropAll('Redis lost its data (the deployment epoch is gone)');
      return { ok: false, countersUnavailable: { retryAfterMs: COUNTERS_REBUILD_RETRY_MS, reason: 'data-lost' } };
    }
    if ('admitted' in outcome) return { ok: false, rateLimited: outcome };
    if ('corruptCounter' in outcome) {
      this.logger.warn(
        `call ${callId}: refused, budget ${outcome.corruptCounter.budgetId} has a corrupt counter (${outcome.corruptCounter.counterKey}); the worker is asked to rebuild it from the ledger`,
      );
      this.askRebuild(caller.orgId, now);
      return { ok: false, countersUnavailable: { retryAfterMs: CORRUPT_COUNTER_RETRY_MS, reason: 'counter-corrupt' } };
    }
    if (!outcome.ok) return { ok: false, budgetExceeded: outcome };
    const held = { ...hold, reservation: outcome.reservation, standings: outcome.standings };
    this.renewal.track(held);
    return { ok: true, hold: held };
  }

  /**
   * Asks the worker to rebuild an organisation's corrupt counter now rather than at the next
   * scheduled reconciliation, so the retry hint holds. Lost if no worker listens: the schedule
   * still rebuilds it, and the next refused call asks again.
   */
  private askRebuild(orgId: string, now: number): void {
    if ((this.rebuildAsked.get(orgId) ?? -Infinity) > now - REBUILD_ASK_EVERY_MS) return;
    if (this.rebuildAsked.size >= 10_000) this.rebuildAsked.clear();
    this.rebuildAsked.set(orgId, now);
    this.redis
      .publish(COUNTER_CORRUPT_CHANNEL, orgId)
      .catch((err: Error) =>
        this.logger.warn(`rebuild of org ${orgId}'s corrupt counter not asked for: ${err.message}`),
      );
  }

  private admitInRedis(admission: AdmissionPlan | null, reservation: ReservationPlan) {
    const epochKey = redisEpochKey(this.redis.prefix, shardOf(reservation.reservation.orgId));
    // The scripts' keys and arguments, made here: a call admitted on a lease never needs them.
    const rateLimits = admission && this.rateLimits.scriptCall(admission);
    const budgets = this.budgets.scriptCall(reservation);
    return this.budgets.reserveThrough<RateLimitRefusal | typeof EPOCH_LOST>(reservation, async () => {
      const res = await this.redis.run(ADMIT_AND_RESERVE, { epochKey, rateLimits, budgets });
      if (res.kind === 'epoch-lost') return { stop: EPOCH_LOST };
      if (res.kind === 'rate-limited') return { stop: this.rateLimits.refusalOf(admission!, res.refusal) };
      return res.answer;
    });
  }

  /** Completions whose opt-in replica wait timed out short (for the edge's /metrics). */
  get completionWaitShortfalls(): number {
    return this.completion.replicaWaitShortfalls;
  }

  /**
   * The completion step: settles the call at `actual` (0 for a call that is free), gives its
   * concurrency slots back and appends its usage event to the outbox, in the script of this turn.
   * Resolves with the budgets' standings (this call settled) once Redis has applied it; rejects with
   * AdmissionException(CompletionNotRecorded) if Redis did not. Once per hold.
   */
  // Not async: the completion's promise resolves with the standings (a wrapper would add a promise and its turn).
  complete(hold: CallHold, actual: Micros, usage: UsageOutboxEntry | null): Promise<BudgetStanding[]> {
    if (hold.completed) return Promise.resolve([]);
    try {
      return this.completeOnce(hold, actual, usage);
    } catch (err) {
      // As from an async function: a failure is the promise's, never a throw at the caller.
      return Promise.reject(err as Error);
    }
  }

  private completeOnce(hold: CallHold, actual: Micros, usage: UsageOutboxEntry | null): Promise<BudgetStanding[]> {
    hold.completed = true;
    this.renewal.forget(hold);
    const work: CompletionWork = {
      orgId: hold.reservation.orgId,
      callId: hold.reservation.id,
      settlement: null,
      conversions: [],
      usage,
    };
    let standings: BudgetStanding[];
    if (hold.leased) {
      const done = this.leases.complete(hold.leased, actual);
      work.conversions = done.conversions;
      standings = done.standings;
    } else {
      const budgetKeys = this.budgets.settlementKeys(hold.reservation);
      const slotKeys = hold.admission?.slots.map((s) => s.key) ?? [];
      if (budgetKeys.length > 0 || slotKeys.length > 0) work.settlement = { budgetKeys, slotKeys, actual };
      standings = hold.standings.map((s) => settled(s, hold.estimate, actual));
    }
    if (work.settlement || work.conversions.length > 0 || work.usage) return this.completion.complete(work, standings);
    return Promise.resolve(standings);
  }

  /**
   * Holds a call admitted in Redis until `untilMs` (a call its upstream made a task, settled when
   * the task ends), or renews it (HoldRenewal): its reservation and concurrency slots are swept at
   * that deadline, not at the call's own. False, with nothing changed, when any of them is gone
   * already (swept, settled or lost), whatever the hold's shape: a reservation and slots, a
   * reservation alone, slots alone. True for a hold with nothing in Redis to lose. Throws for a
   * leased call (its share is this edge's, which cannot outlive the request).
   */
  async extendHold(hold: CallHold, untilMs: number, now = Date.now()): Promise<boolean> {
    if (hold.leased) throw new Error(`call ${hold.reservation.id}: a leased call cannot be held longer`);
    const reserved = hold.reservation.budgets.length > 0;
    const slotKeys = hold.admission?.slots.map((s) => s.key) ?? [];
    if (!reserved && slotKeys.length === 0) return true;
    return this.redis.run(EXTEND_HOLD, {
      callId: hold.reservation.id,
      recordKeys: reserved ? this.budgets.recordKeys(hold.reservation.orgId) : null,
      slotKeys,
      deadline: untilMs,
      now,
    });
  }

  /**
   * Whether a hold's reservation is still in Redis (a settlement, or the sweep at its deadline,
   * drops it). True for a hold that reserved no budget: there is nothing to tell.
   */
  async stillReserved(hold: CallHold): Promise<boolean> {
    if (hold.leased || hold.reservation.budgets.length === 0) return true;
    const [rKey] = this.budgets.recordKeys(hold.reservation.orgId);
    return (await this.redis.client.hexists(rKey, hold.reservation.id)) === 1;
  }

  /**
   * Hands a hold over to whoever settles it later, on any edge (a task, its hold kept as data):
   * this process's copy is marked done, so the request's own way out does not release it, and
   * this edge no longer renews it (its deadline is the task's, set with extendHold).
   */
  handOver(hold: CallHold): void {
    if (hold.leased) throw new Error(`call ${hold.reservation.id}: a leased call cannot be handed over`);
    hold.completed = true;
    this.renewal.forget(hold);
  }

  /**
   * Frees a call that never reached its upstream (uncharged, no usage event). Nothing waits for
   * it: until Redis has run it, the reservation holds the estimate, which refuses, never overspends.
   */
  release(hold: CallHold): void {
    // Settled already (every call that reached its upstream): nothing to free, and no promise made for it.
    if (hold.completed) return;
    this.complete(hold, 0n, null).catch((err: Error) =>
      this.logger.warn(
        `call ${hold.reservation.id} not released (its reservation expires at its deadline): ${err.message}`,
      ),
    );
  }

  /**
   * A no-op admission in every shard (the admission script with no limits: it checks the shard's
   * epoch and writes nothing), for the edge's /readyz: Redis answering PING is not enough, the
   * money path must be able to run its scripts on every shard's slot and find the counters there.
   * Rejects naming the shard otherwise.
   */
  async probe(): Promise<void> {
    await Promise.all(
      ALL_SHARDS.map(async (shard) => {
        const res = await this.redis.run(ADMIT_AND_RESERVE, {
          epochKey: redisEpochKey(this.redis.prefix, shard),
          rateLimits: null,
          budgets: null,
        });
        if (res.kind === 'epoch-lost')
          throw new Error(`shard ${shard} has no epoch: Redis lost its data, counters are being rebuilt`);
        if (res.kind !== 'budget') throw new Error(`shard ${shard}: unexpected admission answer ${res.kind}`);
      }),
    );
  }

  /** Resolves once the Redis work of the calls completed so far is done (for tests and shutdown). */
  async settled(): Promise<void> {
    await this.completion.settled();
    await this.leases.settled();
    await this.renewal.settled();
  }

  /**
   * After the HTTP server has closed (calls still being answered need this connection): the
   * completions sent are answered before it closes. No call is in flight any more: renewal stops.
   */
  async onApplicationShutdown(): Promise<void> {
    await this.renewal.stop();
    await this.completion.settled();
    await this.connection.quit().catch(() => undefined);
  }
}

/** The admission script found the deployment's epoch gone. */
const EPOCH_LOST = 'epoch-lost' as const;

/** Everything a call must fit, as leases are kept. */
function leaseRequest(
  orgId: string,
  [rKey, zKey]: [string, string],
  reservation: SpendReservation,
  admission: AdmissionPlan | null,
  estimate: Micros,
): LeaseRequest {
  return {
    orgId,
    rKey,
    zKey,
    budgets: reservation.budgets,
    windows: admission?.windows ?? [],
    slots: admission?.slots ?? [],
    estimate,
  };
}

/** A budget's standing after a call that reserved `estimate` settled at `cost`. */
function settled(s: BudgetStanding, estimate: Micros, cost: Micros): BudgetStanding {
  const spentMicros = s.spentMicros + cost;
  const reservedMicros = s.reservedMicros > estimate ? s.reservedMicros - estimate : 0n;
  const remaining = s.limitMicros - spentMicros - reservedMicros;
  return { ...s, spentMicros, reservedMicros, remainingMicros: remaining > 0n ? remaining : 0n };
}
