import { Inject, Injectable, Logger } from '@nestjs/common';
import { BudgetService, BudgetStanding, ReservationPlan, SpendReservation, SpendScopes } from '@tollgate/budget';
import { Micros, ToolRef } from '@tollgate/kernel';
import { AdmissionPlan, RateLimitCaller, RateLimitRefusal, RateLimitService } from '@tollgate/rate-limit';
import { RedisService } from '@tollgate/redis';
import { AdmissionLeases } from './admission-leases';
import { ADMIT_AND_RESERVE_SCRIPT, SETTLE_AND_RELEASE_SCRIPT } from './admission-scripts';
import { ADMISSION_SETTINGS, AdmissionSettings } from './admission-settings';
import { LeasedCall, LeaseRequest } from './lease-kinds';

export type CallAdmission =
  | { ok: true; hold: CallHold }
  | { ok: false; rateLimited: RateLimitRefusal }
  | { ok: false; budgetExceeded: { exceeded: BudgetStanding; requestedMicros: Micros } };

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
 * A governed call's admission and settlement. Far from every limit, calls are admitted against
 * this edge's leases (AdmissionLeases) with no round trip. Otherwise, before the upstream, rate
 * limits and budget reservation run in one script (one round trip, all or nothing); after, one
 * script settles and frees the concurrency slots. The scripts are the rate-limit and budget
 * libraries' own Lua functions, run together.
 */
@Injectable()
export class CallAdmissionService {
  private readonly logger = new Logger(CallAdmissionService.name);
  /** Settlements sent and not answered yet. */
  private readonly settling = new Set<Promise<unknown>>();

  constructor(
    private readonly redis: RedisService,
    private readonly rateLimits: RateLimitService,
    private readonly budgets: BudgetService,
    private readonly leases: AdmissionLeases,
    @Inject(ADMISSION_SETTINGS) private readonly settings: AdmissionSettings,
  ) {}

  /**
   * Rate limits and budgets for one call: against this edge's leases, or in one round trip.
   * `tool` null: budgets only (a page read of a result, which calls no upstream).
   */
  async admit(caller: RateLimitCaller & SpendScopes, tool: ToolRef | null, callId: string, estimate: Micros, now: number): Promise<CallAdmission> {
    const deadline = now + this.settings.reservationTtlMs;
    const [admission, reservation] = await Promise.all([
      tool ? this.rateLimits.planAdmission(caller, tool, callId, now, deadline) : null,
      this.budgets.planReservation(caller, callId, estimate, new Date(now), deadline),
    ]);
    const hold: CallHold = { reservation: reservation.reservation, estimate, standings: [], admission, leased: null, completed: false };
    if (!admission && reservation.keys.length === 0) return { ok: true, hold };
    const lease = this.leases.enabled ? leaseRequest(caller.orgId, this.budgets.recordKeys(caller.orgId), reservation.reservation, admission, estimate) : null;
    hold.leased = lease && (await this.leases.admit(lease, now));
    if (hold.leased) return { ok: true, hold };

    let outcome = await this.admitInRedis(admission, reservation);
    // Refused in Redis while this edge holds unused allowance on the call's limits: give it back and ask again.
    if (lease && !('reservation' in outcome) && (await this.leases.giveBack(lease, Date.now()))) outcome = await this.admitInRedis(admission, reservation);
    if ('admitted' in outcome) return { ok: false, rateLimited: outcome };
    if (!outcome.ok) return { ok: false, budgetExceeded: outcome };
    return { ok: true, hold: { ...hold, reservation: outcome.reservation, standings: outcome.standings } };
  }

  private admitInRedis(admission: AdmissionPlan | null, reservation: ReservationPlan) {
    const keys = [...(admission?.keys ?? []), ...reservation.keys];
    const args = [admission?.keys.length ?? 0, admission?.args.length ?? 0, ...(admission?.args ?? []), ...reservation.args];
    return this.budgets.reserveThrough(reservation, async () => {
      const [kind, res] = (await this.redis.evalScript(ADMIT_AND_RESERVE_SCRIPT, keys, args)) as [number, number[]];
      return kind === 1 ? { stop: this.rateLimits.refusalOf(admission!, res) } : res;
    });
  }

  /**
   * Settles the call at `actual` (0 for a call that is free) and gives its concurrency slots back,
   * once per hold. Returns the budgets' standings with this call settled. Redis is not awaited: the
   * work is sent before this edge reads its next request (failures are logged), and until Redis
   * applies it the reservation or lease still holds at least the cost, so nobody can spend it twice.
   */
  complete(hold: CallHold, actual: Micros): BudgetStanding[] {
    if (hold.completed) return [];
    hold.completed = true;
    if (hold.leased) return this.leases.complete(hold.leased, actual);
    const budgetKeys = this.budgets.settlementKeys(hold.reservation);
    const slotKeys = hold.admission?.slots.map((s) => s.key) ?? [];
    if (budgetKeys.length > 0 || slotKeys.length > 0) {
      const sent = this.redis
        .evalScript(SETTLE_AND_RELEASE_SCRIPT, [...budgetKeys, ...slotKeys], [budgetKeys.length, hold.reservation.id, actual.toString()])
        .catch((err: Error) => this.logger.error(`call ${hold.reservation.id} not settled (its reservation expires; the ledger has the call): ${err.message}`))
        .finally(() => this.settling.delete(sent));
      this.settling.add(sent);
    }
    return hold.standings.map((s) => settled(s, hold.estimate, actual));
  }

  /** Resolves once the Redis work of the calls completed so far is done (for tests and shutdown). */
  async settled(): Promise<void> {
    await Promise.all([...this.settling]);
    await this.leases.settled();
  }
}

/** Everything a call must fit, as leases are kept. */
function leaseRequest(orgId: string, [rKey, zKey]: [string, string], reservation: SpendReservation, admission: AdmissionPlan | null, estimate: Micros): LeaseRequest {
  return { orgId, rKey, zKey, budgets: reservation.budgets, windows: admission?.windows ?? [], slots: admission?.slots ?? [], estimate };
}

/** A budget's standing after a call that reserved `estimate` settled at `cost`. */
function settled(s: BudgetStanding, estimate: Micros, cost: Micros): BudgetStanding {
  const spentMicros = s.spentMicros + cost;
  const reservedMicros = s.reservedMicros > estimate ? s.reservedMicros - estimate : 0n;
  const remaining = s.limitMicros - spentMicros - reservedMicros;
  return { ...s, spentMicros, reservedMicros, remainingMicros: remaining > 0n ? remaining : 0n };
}
