import { BeforeApplicationShutdown, Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { BudgetStanding, budgetStanding } from '@tollgate/budget';
import { Micros } from '@tollgate/kernel';
import { RedisService, redisEpochKey, shardOf } from '@tollgate/redis';
import { AdmissionClock, SYSTEM_CLOCK } from './admission-clock';
import { ADMISSION_SETTINGS, AdmissionSettings } from './admission-settings';
import type { ConversionAnswer } from './admission-scripts';
import {
  BudgetLease,
  DENIED_MS,
  FIRST_LEASE_CALLS,
  Lease,
  LeaseBase,
  LeasedCall,
  LeaseRequest,
  budgetLeaseKey,
  busy,
  covers,
  freeCalls,
  freeOf,
  newBudgetLease,
  newSlotLease,
  newWindowLease,
  outlived,
  slotLeaseKey,
  windowLeaseKey,
} from './lease-kinds';
import { LeaseSync } from './lease-sync';

/**
 * The lease book: this edge takes blocks of budget and rate-limit allowance from Redis and admits
 * calls against them in memory, so a call far from every limit costs no round trip before its upstream.
 *
 * - A lease takes at most 1/LEASE_SHARE of what a limit has left, and none when that is under
 *   MIN_LEASE_CALLS calls: near a limit every call is checked in Redis, one by one, exactly as
 *   without leases. Redis counts leased allowance as used, so no limit is ever exceeded, across
 *   any number of edges.
 * - Budget leases are records beside the per-call reservations (`L:` ids, field `leased` of the
 *   counter) with the same deadline: an edge that dies loses its leases at the deadline. A call
 *   admitted under a lease turns its actual cost from leased into spent in its completion, which
 *   Redis acknowledges before the call is answered; so when a dead edge's lease is swept, what it
 *   answered is already spent (and in the outbox), and only allowance no answered call used goes back.
 * - Window leases count their calls in the window at once; concurrency leases hold slots in the
 *   set, as members that expire at the deadline like a call's.
 * - What a lease has not used goes back when no call has used it for the idle time, when its
 *   window ends, when a call is refused in Redis (so this edge never refuses a call for allowance it
 *   holds itself), and when the edge shuts down.
 */
@Injectable()
export class AdmissionLeases implements OnModuleInit, BeforeApplicationShutdown {
  private readonly logger = new Logger(AdmissionLeases.name);
  private readonly leases = new Map<string, Lease>();
  private readonly sync: LeaseSync;
  private readonly clock: AdmissionClock;
  private stopTimers: (() => void)[] = [];
  private closing = false;

  constructor(
    redis: RedisService,
    @Inject(ADMISSION_SETTINGS) private readonly settings: AdmissionSettings,
  ) {
    const epochLost = () => this.dropAll('Redis lost its data (the deployment epoch is gone)');
    this.clock = settings.clock ?? SYSTEM_CLOCK;
    this.sync = new LeaseSync(
      redis,
      this.clock,
      settings.reservationTtlMs,
      (orgId) => redisEpochKey(redis.prefix, shardOf(orgId)),
      (l, why) => this.drop(l, why),
      epochLost,
    );
  }

  get enabled(): boolean {
    return this.settings.leases;
  }

  onModuleInit(): void {
    if (!this.enabled) return;
    const idleMs = this.settings.leaseIdleMs;
    const clock = this.clock;
    this.stopTimers = [
      clock.every(Math.max(Math.floor(idleMs / 4), 25), () => this.returnIdle(clock.now())),
      clock.every(Math.floor(this.sync.ttlMs / 3), () => this.sync.renew([...this.leases.values()], clock.now())),
    ];
  }

  /**
   * Gives back everything no call in flight holds; calls in flight still settle against their
   * leases. Runs before Redis is closed (RedisService closes in onApplicationShutdown).
   */
  async beforeApplicationShutdown(): Promise<void> {
    this.closing = true;
    for (const stop of this.stopTimers) stop();
    this.stopTimers = [];
    const all = [...this.leases.values()];
    for (const l of all) l.dropped = true;
    this.leases.clear();
    await this.sync.release(all, this.clock.now());
    await this.settled();
  }

  /** Leased allowance this edge holds now, per kind (for tests and metrics). */
  holdings(): { budgetMicros: bigint; windowCalls: number; slots: number } {
    let budgetMicros = 0n;
    let windowCalls = 0;
    let slots = 0;
    for (const l of this.leases.values()) {
      if (l.kind === 'budget') budgetMicros += l.held;
      else if (l.kind === 'window') windowCalls += l.free;
      else slots += l.members.length;
    }
    return { budgetMicros, windowCalls, slots };
  }

  /** This edge's budget leases: each one's record in the organisation's reservations and what it holds there. */
  budgetLeases(): { id: string; recordsKey: string; counterKey: string; held: bigint }[] {
    const out = [];
    for (const l of this.leases.values())
      if (l.kind === 'budget') out.push({ id: l.id, recordsKey: l.rKey, counterKey: l.hKey, held: l.held });
    return out;
  }

  /**
   * Admits the call against this edge's leases, asking Redis for a lease first where it has none
   * (one round trip, shared by the calls that wait for it). Null when the call must be checked in
   * Redis on its own: a limit is near, or Redis has no counter yet. Without a promise when no
   * grant is needed (nearly every call: each promise waited for is a turn of the microtask queue).
   */
  admit(req: LeaseRequest, now: number): LeasedCall | null | Promise<LeasedCall | null> {
    if (!this.enabled || this.closing) return null;
    const leases = this.leasesFor(req, now);
    const taken = this.take(req, leases, now);
    if (taken) return taken;
    if (leases.some((l) => l.deniedUntil > now)) return null;
    return this.grantAndTake(req, leases, now);
  }

  /** Asks Redis for the leases that cannot cover the call, then admits it against them if they now can. */
  private async grantAndTake(req: LeaseRequest, leases: Lease[], now: number): Promise<LeasedCall | null> {
    await this.grant(
      req,
      leases.filter((l) => !covers(l, req.estimate, now)),
      now,
    );
    const after = this.clock.now();
    return this.take(req, this.leasesFor(req, after), after);
  }

  /**
   * A call under leases completed at `actual`: its slots are free again, and it returns the cost to
   * convert from leased to spent on each budget lease (the completion step sends it, with the
   * call's usage event; a conversion changes no admission: spent and leased both count against a
   * limit), with the budgets' standings as this edge knows them, this call settled.
   */
  complete(
    call: LeasedCall,
    actual: Micros,
  ): { standings: BudgetStanding[]; conversions: { lease: BudgetLease; amount: bigint }[] } {
    const spare: Lease[] = [];
    const conversions: { lease: BudgetLease; amount: bigint }[] = [];
    for (const l of call.budgets) {
      l.inFlight--;
      l.free += call.estimate - actual;
      if (actual > 0n) {
        // From now on the Redis record holds `actual` less, once the completion has run.
        l.held -= actual;
        l.unconfirmed += actual;
        conversions.push({ lease: l, amount: actual });
      }
      if (l.dropped && l.free > 0n) spare.push(l);
    }
    for (const l of call.slots) {
      l.inUse--;
      if (l.dropped) spare.push(l);
    }
    // A dropped lease admits nothing more: what its calls leave goes straight back.
    if (spare.length > 0)
      this.sync.background(this.sync.release(spare, this.clock.now()), 'what a dropped lease held not given back');
    const standings = call.bounds.map((b, i) => {
      const k = call.budgets[i].known;
      return budgetStanding(b, k.spent + call.budgets[i].unconfirmed, k.reserved, k.leased);
    });
    return { standings, conversions };
  }

  /**
   * What Redis answered for a conversion sent by the completion step: the counter as it now is, or
   * that the lease is gone (swept, counter lost); null when the completion failed.
   */
  converted(l: BudgetLease, amount: bigint, answer: ConversionAnswer | null): void {
    l.unconfirmed -= amount;
    if (!answer) return this.drop(l, 'a completion under it was not acknowledged');
    if (answer.lease === 'counter-lost') return this.drop(l, 'its budget counter is gone from Redis');
    l.known = { ...l.known, spent: answer.spent, leased: answer.leased };
    if (answer.lease === 'swept') this.drop(l, 'Redis swept it before it was renewed');
  }

  /**
   * A call was refused in Redis: gives back what this edge's leases on its limits hold unused, so
   * this edge never refuses a call for allowance it holds itself. True when something went back
   * (the call is worth checking again).
   */
  async giveBack(req: LeaseRequest, now: number): Promise<boolean> {
    if (!this.enabled) return false;
    const held = this.leasesFor(req, now).filter((l) => freeOf(l) > 0);
    for (const l of held) l.deniedUntil = now + DENIED_MS;
    if (held.length === 0) return false;
    await this.sync.release(held, now);
    return true;
  }

  /** Resolves once the refills and returns started so far are done. */
  async settled(): Promise<void> {
    await this.sync.settled();
  }

  /** The call's leases, made (empty) where this edge has none; a lease past its validity is dropped for a new one. */
  private leasesFor(req: LeaseRequest, now: number): Lease[] {
    const out: Lease[] = [];
    // A call looks up a lease for every budget, window and slot of every level (a dozen), so no
    // closure is made per lease: a new one is made only where none is kept.
    for (const b of req.budgets) {
      const key = budgetLeaseKey(b);
      out.push(
        this.liveLease(key, now) ??
          this.keep(newBudgetLease(this.emptyLease(key, req, now), b, this.sync.newLeaseId())),
      );
    }
    for (const w of req.windows) {
      const key = windowLeaseKey(w);
      out.push(this.liveLease(key, now) ?? this.keep(newWindowLease(this.emptyLease(key, req, now), w)));
    }
    for (const s of req.slots) {
      const key = slotLeaseKey(s);
      out.push(this.liveLease(key, now) ?? this.keep(newSlotLease(this.emptyLease(key, req, now), s)));
    }
    return out;
  }

  /**
   * The lease kept under mapKey, or null. A lease that outlived its validity without renewal is
   * dropped (the caller keeps a new one): Redis may have swept it, so what this edge thinks it
   * holds may be gone.
   */
  private liveLease(mapKey: string, now: number): Lease | null {
    const l = this.leases.get(mapKey);
    if (l && !outlived(l, now)) return l;
    if (l) this.drop(l, 'not renewed in time');
    return null;
  }

  private keep(lease: Lease): Lease {
    this.leases.set(lease.mapKey, lease);
    return lease;
  }

  /** What every new lease starts from: nothing granted yet. */
  private emptyLease(mapKey: string, req: LeaseRequest, now: number): LeaseBase {
    return {
      mapKey,
      orgId: req.orgId,
      rKey: req.rKey,
      zKey: req.zKey,
      wantCalls: FIRST_LEASE_CALLS,
      lastGrantCalls: 0,
      lastUsed: now,
      validUntil: 0,
      acquiring: null,
      deniedUntil: 0,
      dropped: false,
    };
  }

  /** Admits the call if every lease covers it, and starts a refill for any lease running low. */
  private take(req: LeaseRequest, leases: Lease[], now: number): LeasedCall | null {
    for (const l of leases) if (!covers(l, req.estimate, now)) return null;
    const call: LeasedCall = { budgets: [], bounds: req.budgets, slots: [], estimate: req.estimate };
    const low: Lease[] = [];
    for (const l of leases) {
      l.lastUsed = now;
      if (l.kind === 'budget') {
        l.free -= req.estimate;
        l.inFlight++;
        call.budgets.push(l);
        if (req.estimate > l.unit) l.unit = req.estimate;
      } else if (l.kind === 'window') {
        l.free--;
      } else {
        l.inUse++;
        call.slots.push(l);
      }
      if (!l.acquiring && l.deniedUntil <= now && freeCalls(l) * 2 < l.lastGrantCalls) low.push(l);
    }
    if (low.length > 0) this.sync.background(this.grant(req, low, now), 'lease not refilled');
    return call;
  }

  /** Asks Redis for grants on these leases (all of one organisation) in one script; waits for grants already in flight. */
  private async grant(req: LeaseRequest, leases: Lease[], now: number): Promise<void> {
    const waiting = leases.filter((l) => l.acquiring).map((l) => l.acquiring!);
    const ask = leases.filter((l) => !l.acquiring && !l.dropped);
    if (ask.length > 0) {
      const run = this.sync.grant(req, ask, now).finally(() => {
        for (const l of ask) if (l.acquiring === run) l.acquiring = null;
      });
      for (const l of ask) l.acquiring = run;
      waiting.push(run);
    }
    await Promise.all(waiting);
  }

  /** Gives back leases no call has used for the idle time, and window leases whose window has ended. */
  private returnIdle(now: number): void {
    const done: Lease[] = [];
    for (const l of this.leases.values()) {
      const quiet =
        now - l.lastUsed >= this.settings.leaseIdleMs || (l.kind === 'window' && now >= l.windowStart + l.windowMs);
      if (!quiet || l.acquiring || busy(l)) continue;
      this.leases.delete(l.mapKey);
      l.dropped = true;
      done.push(l);
    }
    if (done.length > 0)
      this.sync.background(
        this.sync.release(done, now),
        'idle leases not given back (Redis sweeps them at their deadline)',
      );
  }

  /**
   * Drops every lease this edge holds (Redis lost its data: what they held is gone with it). New
   * calls go to Redis, which refuses them until the worker has rebuilt the counters.
   */
  dropAll(why: string): void {
    if (this.leases.size === 0) return;
    this.logger.error(`every lease dropped (${this.leases.size}): ${why}`);
    for (const l of [...this.leases.values()]) this.drop(l, why);
  }

  /** No more calls under this lease; what it holds unused goes back. */
  private drop(l: Lease, why: string): void {
    if (l.dropped) return;
    l.dropped = true;
    if (this.leases.get(l.mapKey) === l) this.leases.delete(l.mapKey);
    this.logger.warn(`lease ${l.mapKey} dropped: ${why}`);
    this.sync.background(this.sync.release([l], this.clock.now()), 'a dropped lease not given back');
  }
}
