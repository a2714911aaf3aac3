import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { BudgetService, BudgetStanding, ReservationPlan, SpendReservation, SpendScopes } from '@tollgate/budget';
import { Micros, ToolRef } from '@tollgate/kernel';
import { AdmissionPlan, RateLimitCaller, RateLimitRefusal, RateLimitService } from '@tollgate/rate-limit';
import { RedisService, redisEpochKey } from '@tollgate/redis';
import { AdmissionLeases } from './admission-leases';
import { ADMIT_AND_RESERVE_SCRIPT } from './admission-scripts';
import { ADMISSION_SETTINGS, AdmissionSettings } from './admission-settings';
import { CallCompletion, CompletionWork, OutboxEntry } from './call-completion';
import { LeasedCall, LeaseRequest } from './lease-kinds';

export type CallAdmission =
  | { ok: true; hold: CallHold }
  | { ok: false; rateLimited: RateLimitRefusal }
  | { ok: false; budgetExceeded: { exceeded: BudgetStanding; requestedMicros: Micros } }
  /** Redis lost its data (the deployment epoch is gone): nothing is admitted until the counters are rebuilt. */
  | { ok: false; countersUnavailable: { retryAfterMs: number } };

/** How long an agent is told to wait while the worker rebuilds counters after Redis lost its data. */
export const COUNTERS_REBUILD_RETRY_MS = 5_000;

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
}

/**
 * A governed call's admission and completion. Far from every limit, calls are admitted against
 * this edge's leases (AdmissionLeases) with no round trip. Otherwise, before the upstream, rate
 * limits and budget reservation run in one script (one round trip, all or nothing). After the
 * upstream, the completion step (CallCompletion) writes the settlement and the usage event in one
 * script per turn of the event loop, and the answer waits for it. The scripts are the rate-limit
 * and budget libraries' own Lua functions, run together.
 */
@Injectable()
export class CallAdmissionService implements OnApplicationShutdown {
  private readonly logger = new Logger(CallAdmissionService.name);
  /** Completions go on a connection of their own, without auto-pipelining: each script leaves at once. */
  private readonly connection: Redis;
  private readonly completion: CallCompletion;
  private readonly epochKey: string;

  constructor(
    private readonly redis: RedisService,
    private readonly rateLimits: RateLimitService,
    private readonly budgets: BudgetService,
    private readonly leases: AdmissionLeases,
    @Inject(ADMISSION_SETTINGS) private readonly settings: AdmissionSettings,
  ) {
    this.connection = redis.client.duplicate({ enableAutoPipelining: false });
    this.connection.on('error', (err) => this.logger.warn(`redis (completions) error: ${err.message}`));
    this.epochKey = redisEpochKey(redis.prefix);
    const epochLost = () => leases.dropAll('Redis lost its data (the deployment epoch is gone)');
    this.completion = new CallCompletion(
      this.connection,
      redis.prefix,
      this.epochKey,
      (lease, amount, answer) => leases.converted(lease, amount, answer),
      epochLost,
    );
  }

  /**
   * Rate limits and budgets for one call: against this edge's leases, or in one round trip.
   * `tool` null: budgets only (a page read of a result, which calls no upstream).
   */
  async admit(
    caller: RateLimitCaller & SpendScopes,
    tool: ToolRef | null,
    callId: string,
    estimate: Micros,
    now: number,
  ): Promise<CallAdmission> {
    const deadline = now + this.settings.reservationTtlMs;
    const [admission, reservation] = await Promise.all([
      tool ? this.rateLimits.planAdmission(caller, tool, callId, now, deadline) : null,
      this.budgets.planReservation(caller, callId, estimate, new Date(now), deadline),
    ]);
    const hold: CallHold = {
      reservation: reservation.reservation,
      estimate,
      standings: [],
      admission,
      leased: null,
      completed: false,
    };
    if (!admission && reservation.keys.length === 0) return { ok: true, hold };
    const lease = this.leases.enabled
      ? leaseRequest(caller.orgId, this.budgets.recordKeys(caller.orgId), reservation.reservation, admission, estimate)
      : null;
    hold.leased = lease && (await this.leases.admit(lease, now));
    if (hold.leased) return { ok: true, hold };

    let outcome = await this.admitInRedis(admission, reservation);
    // Refused in Redis while this edge holds unused allowance on the call's limits: give it back and ask again.
    if (
      lease &&
      outcome !== EPOCH_LOST &&
      !('reservation' in outcome) &&
      (await this.leases.giveBack(lease, Date.now()))
    )
      outcome = await this.admitInRedis(admission, reservation);
    if (outcome === EPOCH_LOST) {
      this.leases.dropAll('Redis lost its data (the deployment epoch is gone)');
      return { ok: false, countersUnavailable: { retryAfterMs: COUNTERS_REBUILD_RETRY_MS } };
    }
    if ('admitted' in outcome) return { ok: false, rateLimited: outcome };
    if (!outcome.ok) return { ok: false, budgetExceeded: outcome };
    return { ok: true, hold: { ...hold, reservation: outcome.reservation, standings: outcome.standings } };
  }

  private admitInRedis(admission: AdmissionPlan | null, reservation: ReservationPlan) {
    const keys = [this.epochKey, ...(admission?.keys ?? []), ...reservation.keys];
    const args = [
      admission?.keys.length ?? 0,
      admission?.args.length ?? 0,
      ...(admission?.args ?? []),
      ...reservation.args,
    ];
    return this.budgets.reserveThrough<RateLimitRefusal | typeof EPOCH_LOST>(reservation, async () => {
      const [kind, res] = (await this.redis.evalScript(ADMIT_AND_RESERVE_SCRIPT, keys, args)) as [number, number[]];
      if (kind === 3) return { stop: EPOCH_LOST };
      return kind === 1 ? { stop: this.rateLimits.refusalOf(admission!, res) } : res;
    });
  }

  /**
   * The completion step: settles the call at `actual` (0 for a call that is free), gives its
   * concurrency slots back and appends its usage event to the outbox, in the script of this turn.
   * Resolves with the budgets' standings (this call settled) once Redis has applied it; rejects with
   * AdmissionException(CompletionNotRecorded) if Redis did not. Once per hold.
   */
  async complete(hold: CallHold, actual: Micros, usage: OutboxEntry | null): Promise<BudgetStanding[]> {
    if (hold.completed) return [];
    hold.completed = true;
    const work: CompletionWork = { settlement: null, conversions: [], usage };
    let standings: BudgetStanding[];
    if (hold.leased) {
      const done = this.leases.complete(hold.leased, actual);
      work.conversions = done.conversions;
      standings = done.standings;
    } else {
      const budgetKeys = this.budgets.settlementKeys(hold.reservation);
      const slotKeys = hold.admission?.slots.map((s) => s.key) ?? [];
      if (budgetKeys.length > 0 || slotKeys.length > 0)
        work.settlement = { budgetKeys, slotKeys, callId: hold.reservation.id, actual };
      standings = hold.standings.map((s) => settled(s, hold.estimate, actual));
    }
    if (work.settlement || work.conversions.length > 0 || work.usage) await this.completion.complete(work);
    return standings;
  }

  /**
   * Frees a call that never reached its upstream (uncharged, no usage event). Nothing waits for
   * it: until Redis has run it, the reservation holds the estimate, which refuses, never overspends.
   */
  release(hold: CallHold): void {
    this.complete(hold, 0n, null).catch((err: Error) =>
      this.logger.warn(
        `call ${hold.reservation.id} not released (its reservation expires at its deadline): ${err.message}`,
      ),
    );
  }

  /** Resolves once the Redis work of the calls completed so far is done (for tests and shutdown). */
  async settled(): Promise<void> {
    await this.completion.settled();
    await this.leases.settled();
  }

  /**
   * After the HTTP server has closed (calls still being answered need this connection): the
   * completions sent are answered before it closes.
   */
  async onApplicationShutdown(): Promise<void> {
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
