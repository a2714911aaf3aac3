import { BeforeApplicationShutdown, Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { BUDGET_LUA, BoundBudget, BudgetStanding, budgetStanding } from '@tollgate/budget';
import { EdgeConfig, TOLLGATE_CONFIG } from '@tollgate/config';
import { Micros } from '@tollgate/kernel';
import { AdmissionPlan, RATE_LIMIT_LUA } from '@tollgate/rate-limit';
import { RedisService } from '@tollgate/redis';

/**
 * Leases: this edge takes blocks of budget and rate-limit allowance from Redis and admits calls
 * against them in memory, so a call far from every limit costs no round trip before its upstream.
 *
 * - A lease takes at most 1/LEASE_SHARE of what a limit has left, and none when that is under
 *   MIN_LEASE_CALLS calls: near a limit every call is checked in Redis, one by one, exactly as
 *   without leases. Redis counts leased allowance as used, so no limit is ever exceeded, across
 *   any number of edges.
 * - Budget leases are records beside the per-call reservations (`L:` ids, field `leased` of the
 *   counter) with the same deadline: an edge that dies loses its leases at the deadline. A call
 *   admitted under a lease turns its actual cost from leased into spent when it completes (one
 *   script per event-loop turn for every call that completed in it).
 * - Window leases count their calls in the window at once; concurrency leases hold slots in the
 *   set, as members that expire at the deadline like a call's.
 * - What a lease has not used goes back when no call has used it for EDGE_LEASE_IDLE_MS, when its
 *   window ends, when a call is refused in Redis (so this edge never refuses a call for allowance it
 *   holds itself), and when the edge shuts down.
 */

/** A lease takes at most 1/LEASE_SHARE of what is left, so edges leasing at once leave room for each other. */
const LEASE_SHARE = 8;
/** Calls a first lease asks for; each refill asks for twice as many, up to MAX_LEASE_CALLS. */
const FIRST_LEASE_CALLS = 16;
const MAX_LEASE_CALLS = 1024;
/** A grant smaller than this many calls is not worth holding: the call goes to Redis instead. */
const MIN_LEASE_CALLS = 2;
/** After Redis refused a grant (a limit is near), calls on that limit go one by one for this long. */
const DENIED_MS = 1000;

interface LeaseBase {
  mapKey: string;
  orgId: string;
  rKey: string;
  zKey: string;
  /** Calls the next grant asks for. */
  wantCalls: number;
  /** Calls the last grant gave: a refill starts when less than half of that is left. */
  lastGrantCalls: number;
  lastUsed: number;
  /** Local admission stops here: well before Redis' deadline for the lease, or at the end of its window. */
  validUntil: number;
  /** A grant in flight, shared by every call waiting for it. */
  acquiring: Promise<void> | null;
  deniedUntil: number;
  /** Given up (swept, counter lost, given back): no new calls; calls in flight still complete against it. */
  dropped: boolean;
}

interface BudgetLease extends LeaseBase {
  kind: 'budget';
  id: string;
  hKey: string;
  limit: bigint;
  hard: boolean;
  /** Micros per call, for sizing grants (the estimate of the call that asked). */
  unit: bigint;
  /** What the Redis record holds once everything sent has run. */
  held: bigint;
  free: bigint;
  inFlight: number;
  /** Cost of completed calls not sent yet. */
  pending: bigint;
  /** Cost of completed calls whose conversion has not been answered: added to `known.spent` in standings. */
  unconfirmed: bigint;
  known: { spent: bigint; reserved: bigint; leased: bigint };
}

interface WindowLease extends LeaseBase {
  kind: 'window';
  key: string;
  prevKey: string;
  limit: number;
  windowMs: number;
  windowStart: number;
  free: number;
}

interface SlotLease extends LeaseBase {
  kind: 'slots';
  key: string;
  max: number;
  members: string[];
  inUse: number;
}

type Lease = BudgetLease | WindowLease | SlotLease;

/** Everything a call must fit, in the form leases are kept. */
export interface LeaseRequest {
  orgId: string;
  /** The organisation's reservation records and deadlines (BudgetService's script keys). */
  rKey: string;
  zKey: string;
  budgets: BoundBudget[];
  windows: AdmissionPlan['windows'];
  slots: AdmissionPlan['slots'];
  estimate: Micros;
}

/** A call admitted under leases: what it holds until it completes. */
export interface LeasedCall {
  budgets: BudgetLease[];
  bounds: BoundBudget[];
  slots: SlotLease[];
  estimate: Micros;
}

const GRANT_SCRIPT = `${RATE_LIMIT_LUA}${BUDGET_LUA}
local now, deadline, div = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local nb, nw, ns = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
local out = {}
local k, a = 3, 7
if nb > 0 then budget_sweep(KEYS[1], KEYS[2], now) end
for i = 1, nb do
  local r = budget_lease(KEYS[1], KEYS[2], KEYS[k], ARGV[a], deadline, tonumber(ARGV[a+1]), tonumber(ARGV[a+2]), tonumber(ARGV[a+3]), ARGV[a+4] == '1', div)
  out[#out+1] = r[1]
  out[#out+1] = r[2] or 0
  out[#out+1] = r[3] or 0
  out[#out+1] = r[4] or 0
  k = k + 1
  a = a + 5
end
for i = 1, nw do
  out[#out+1] = rl_lease_window(KEYS[k], KEYS[k+1], now, tonumber(ARGV[a]), tonumber(ARGV[a+1]), tonumber(ARGV[a+2]), tonumber(ARGV[a+3]), tonumber(ARGV[a+4]), div)
  k = k + 2
  a = a + 5
end
for i = 1, ns do
  out[#out+1] = rl_lease_slots(KEYS[k], now, deadline, tonumber(ARGV[a]), tonumber(ARGV[a+1]), tonumber(ARGV[a+2]), div, ARGV[a+3], tonumber(ARGV[a+4]))
  k = k + 1
  a = a + 5
end
return out
`;

/** KEYS: R, H1..Hn   ARGV: per counter: lease id, cost. Returns budget_lease_convert's answers, 3 numbers each. */
const CONVERT_SCRIPT = `${BUDGET_LUA}
local out = {}
for i = 2, #KEYS do
  local r = budget_lease_convert(KEYS[1], KEYS[i], ARGV[2*i-3], tonumber(ARGV[2*i-2]))
  out[#out+1] = r[1]
  out[#out+1] = r[2]
  out[#out+1] = r[3]
end
return out
`;

/**
 * KEYS: R, Z, then the concurrency sets.  ARGV: now, deadline, #budget leases, their ids, then per
 * set: #members, the members. Moves each lease's deadline on; answers 1 per lease still whole, 0 per
 * lease Redis already swept (in part, for slots).
 */
const RENEW_SCRIPT = `
local now, deadline, nb = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local out = {}
for i = 1, nb do
  local id = ARGV[3 + i]
  if redis.call('HEXISTS', KEYS[1], id) == 1 then
    redis.call('ZADD', KEYS[2], deadline, id)
    out[#out+1] = 1
  else
    out[#out+1] = 0
  end
end
local a = 4 + nb
for k = 3, #KEYS do
  local n = tonumber(ARGV[a])
  local members, args = {}, {}
  for j = 1, n do
    members[j] = ARGV[a + j]
    args[#args+1] = deadline
    args[#args+1] = ARGV[a + j]
  end
  local present = 0
  for _, s in ipairs(redis.call('ZMSCORE', KEYS[k], unpack(members))) do
    if s then present = present + 1 end
  end
  redis.call('ZADD', KEYS[k], 'XX', unpack(args))
  redis.call('PEXPIRE', KEYS[k], math.max(deadline - now, 1000))
  out[#out+1] = present == n and 1 or 0
  a = a + 1 + n
end
return out
`;

/**
 * KEYS: R, Z, the budget counters, the window counters, the concurrency sets.
 * ARGV: #budgets, #windows, #sets, per budget: lease id, amount; per window: calls; per set: #members, the members.
 */
const RELEASE_SCRIPT = `${RATE_LIMIT_LUA}${BUDGET_LUA}
local nb, nw, ns = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local k, a = 3, 4
for i = 1, nb do
  budget_lease_release(KEYS[1], KEYS[2], KEYS[k], ARGV[a], tonumber(ARGV[a+1]))
  k = k + 1
  a = a + 2
end
for i = 1, nw do
  rl_lease_window_release(KEYS[k], tonumber(ARGV[a]))
  k = k + 1
  a = a + 1
end
for i = 1, ns do
  local n = tonumber(ARGV[a])
  local members = {}
  for j = 1, n do members[j] = ARGV[a + j] end
  if n > 0 then redis.call('ZREM', KEYS[k], unpack(members)) end
  k = k + 1
  a = a + 1 + n
end
return 1
`;

/** What one release script gives back for one organisation. */
interface ReleaseBatch {
  rKey: string;
  zKey: string;
  budgets: { lease: BudgetLease; amount: bigint }[];
  windows: { key: string; calls: number }[];
  slots: { key: string; members: string[] }[];
}

@Injectable()
export class AdmissionLeases implements OnModuleInit, BeforeApplicationShutdown {
  private readonly logger = new Logger(AdmissionLeases.name);
  private readonly leases = new Map<string, Lease>();
  private readonly edgeId = randomBytes(6).toString('hex');
  private seq = 0;
  private readonly toConvert = new Set<BudgetLease>();
  private flushScheduled = false;
  private timers: NodeJS.Timeout[] = [];
  private closing = false;
  /** Redis work the calls did not wait for (conversions, refills, returns), until it is done. */
  private readonly inBackground = new Set<Promise<unknown>>();
  private readonly ttlMs: number;
  private readonly marginMs: number;

  constructor(
    private readonly redis: RedisService,
    @Inject(TOLLGATE_CONFIG) private readonly config: EdgeConfig,
  ) {
    this.ttlMs = config.edge.reservationTtlSeconds * 1000;
    // Local admission stops this long before Redis would sweep a lease that was not renewed.
    this.marginMs = Math.max(Math.floor(this.ttlMs / 4), 2000);
  }

  get enabled(): boolean {
    return this.config.edge.admissionLeases;
  }

  onModuleInit(): void {
    if (!this.enabled) return;
    const idleMs = this.config.edge.leaseIdleMs;
    this.timers = [
      setInterval(() => this.returnIdle(Date.now()), Math.max(Math.floor(idleMs / 4), 25)),
      setInterval(() => this.renew(Date.now()), Math.floor(this.ttlMs / 3)),
    ];
    for (const t of this.timers) t.unref();
  }

  /**
   * Gives back everything no call in flight holds; calls in flight still settle against their
   * leases. Runs before Redis is closed (RedisService closes in onApplicationShutdown).
   */
  async beforeApplicationShutdown(): Promise<void> {
    this.closing = true;
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
    this.flush();
    const all = [...this.leases.values()];
    for (const l of all) l.dropped = true;
    this.leases.clear();
    await this.release(all, Date.now());
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

  /**
   * Admits the call against this edge's leases, asking Redis for a lease first where it has none
   * (one round trip, shared by the calls that wait for it). Null when the call must be checked in
   * Redis on its own: a limit is near, or Redis has no counter yet.
   */
  async admit(req: LeaseRequest, now: number): Promise<LeasedCall | null> {
    if (!this.enabled || this.closing) return null;
    const leases = this.leasesFor(req, now);
    const taken = this.take(req, leases, now);
    if (taken) return taken;
    if (leases.some((l) => l.deniedUntil > now)) return null;
    await this.grant(req, leases.filter((l) => !this.covers(l, req, now)), now);
    const after = Date.now();
    return this.take(req, this.leasesFor(req, after), after);
  }

  /**
   * A call under leases completed at `actual`: its slots are free again and its cost is converted
   * from leased to spent, sent with the conversions of every call that completed in the same pass
   * of the event loop (a conversion changes no admission: spent and leased both count against a
   * limit). Returns the budgets' standings as this edge knows them, with this call settled.
   */
  complete(call: LeasedCall, actual: Micros): BudgetStanding[] {
    const spare: Lease[] = [];
    for (const l of call.budgets) {
      l.inFlight--;
      l.free += call.estimate - actual;
      if (actual > 0n) {
        l.pending += actual;
        l.unconfirmed += actual;
        this.toConvert.add(l);
      }
      if (l.dropped && l.free > 0n) spare.push(l);
    }
    for (const l of call.slots) {
      l.inUse--;
      if (l.dropped) spare.push(l);
    }
    // A dropped lease admits nothing more: what its calls leave goes straight back.
    if (spare.length > 0) this.background(this.release(spare, Date.now()), 'what a dropped lease held not given back');
    if (this.toConvert.size > 0 && !this.flushScheduled) {
      // Scheduled before Redis auto-pipelining's own setImmediate for commands issued later in this
      // turn (the call's XADD, which the pipeline issues after settling), so the conversion joins
      // their socket write. Issued after them, it would go out in the next turn, just before the
      // next call's upstream request: one more wake-up of Redis on the critical path.
      this.flushScheduled = true;
      setImmediate(() => this.flush());
    }
    return call.bounds.map((b, i) => {
      const k = call.budgets[i].known;
      return budgetStanding(b, k.spent + call.budgets[i].unconfirmed, k.reserved, k.leased);
    });
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
    await this.release(held, now);
    return true;
  }

  /** The call's leases, made (empty) where this edge has none; a lease past its validity is dropped for a new one. */
  private leasesFor(req: LeaseRequest, now: number): Lease[] {
    const out: Lease[] = [];
    for (const b of req.budgets) {
      out.push(
        this.leaseAt(`${b.hashKey}|${b.rule.limitMicros}|${b.rule.mode}`, req, now, (base) => ({
          ...base,
          kind: 'budget',
          id: `L:${this.edgeId}:${++this.seq}`,
          hKey: b.hashKey,
          limit: b.rule.limitMicros,
          hard: b.rule.mode === 'HARD',
          unit: 1n,
          held: 0n,
          free: 0n,
          inFlight: 0,
          pending: 0n,
          unconfirmed: 0n,
          known: { spent: 0n, reserved: 0n, leased: 0n },
        })),
      );
    }
    for (const w of req.windows) {
      out.push(this.leaseAt(`${w.key}|${w.limit}`, req, now, (base) => ({ ...base, kind: 'window', key: w.key, prevKey: w.prevKey, limit: w.limit, windowMs: w.windowMs, windowStart: w.windowStart, free: 0 })));
    }
    for (const s of req.slots) {
      out.push(this.leaseAt(`${s.key}|${s.max}`, req, now, (base) => ({ ...base, kind: 'slots', key: s.key, max: s.max, members: [], inUse: 0 })));
    }
    return out;
  }

  /**
   * The lease kept under mapKey, or a new empty one made by `make`. A lease that outlived its
   * validity without renewal is dropped for a new one: Redis may have swept it, so what this edge
   * thinks it holds may be gone.
   */
  private leaseAt<L extends Lease>(mapKey: string, req: LeaseRequest, now: number, make: (base: LeaseBase) => L): Lease {
    const l = this.leases.get(mapKey);
    if (l && !(l.lastGrantCalls > 0 && now >= l.validUntil && l.kind !== 'window')) return l;
    if (l) this.drop(l, 'not renewed in time');
    const made = make({ mapKey, orgId: req.orgId, rKey: req.rKey, zKey: req.zKey, wantCalls: FIRST_LEASE_CALLS, lastGrantCalls: 0, lastUsed: now, validUntil: 0, acquiring: null, deniedUntil: 0, dropped: false });
    this.leases.set(mapKey, made);
    return made;
  }

  /** The lease can admit this call now. */
  private covers(l: Lease, req: LeaseRequest, now: number): boolean {
    if (l.dropped || now >= l.validUntil) return false;
    if (l.kind === 'budget') return l.free >= req.estimate && (req.estimate > 0n || l.held > 0n);
    return freeOf(l) >= 1;
  }

  /** Admits the call if every lease covers it, and starts a refill for any lease running low. */
  private take(req: LeaseRequest, leases: Lease[], now: number): LeasedCall | null {
    for (const l of leases) if (!this.covers(l, req, now)) return null;
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
    if (low.length > 0) this.background(this.grant(req, low, now), 'lease not refilled');
    return call;
  }

  /** Asks Redis for grants on these leases (all of one organisation) in one script; waits for grants already in flight. */
  private async grant(req: LeaseRequest, leases: Lease[], now: number): Promise<void> {
    const waiting = leases.filter((l) => l.acquiring).map((l) => l.acquiring!);
    const ask = leases.filter((l) => !l.acquiring && !l.dropped);
    if (ask.length > 0) {
      const run = this.runGrant(req, ask, now).finally(() => {
        for (const l of ask) if (l.acquiring === run) l.acquiring = null;
      });
      for (const l of ask) l.acquiring = run;
      waiting.push(run);
    }
    await Promise.all(waiting);
  }

  private async runGrant(req: LeaseRequest, ask: Lease[], now: number): Promise<void> {
    const budgets = ask.filter((l): l is BudgetLease => l.kind === 'budget');
    const windows = ask.filter((l): l is WindowLease => l.kind === 'window');
    const slots = ask.filter((l): l is SlotLease => l.kind === 'slots');
    const deadline = now + this.ttlMs;
    const keys = [req.rKey, req.zKey];
    const args: (string | number)[] = [now, deadline, LEASE_SHARE, budgets.length, windows.length, slots.length];
    for (const l of budgets) {
      const unit = req.estimate > l.unit ? req.estimate : l.unit;
      keys.push(l.hKey);
      args.push(l.id, (unit * BigInt(l.wantCalls)).toString(), (unit * BigInt(MIN_LEASE_CALLS)).toString(), l.limit.toString(), l.hard ? '1' : '0');
    }
    for (const l of windows) {
      keys.push(l.key, l.prevKey);
      args.push(l.limit, l.windowMs, l.windowStart, l.wantCalls, MIN_LEASE_CALLS);
    }
    const firsts: number[] = [];
    for (const l of slots) {
      keys.push(l.key);
      firsts.push(this.seq + 1);
      args.push(l.max, l.wantCalls, MIN_LEASE_CALLS, `L:${this.edgeId}:`, this.seq + 1);
      this.seq += l.wantCalls;
    }
    const res = (await this.redis.evalScript(GRANT_SCRIPT, keys, args)) as number[];
    const validUntil = now + this.ttlMs - this.marginMs;
    const deniedUntil = Date.now() + DENIED_MS;
    let i = 0;
    for (const l of budgets) {
      const [granted, spent, reserved, leased] = res.slice(i, i + 4);
      i += 4;
      if (granted === -1) continue; // no counter yet: the call is checked in Redis, which seeds it
      l.known = { spent: BigInt(spent), reserved: BigInt(reserved), leased: BigInt(leased) };
      if (granted === 0) {
        l.deniedUntil = deniedUntil;
        continue;
      }
      const g = BigInt(granted);
      l.held += g;
      l.free += g;
      l.validUntil = validUntil;
      this.grew(l, Number(g / (l.unit > 0n ? l.unit : 1n)));
    }
    for (const l of windows) {
      const granted = res[i++];
      if (granted === 0) l.deniedUntil = deniedUntil;
      else {
        l.free += granted;
        l.validUntil = l.windowStart + l.windowMs;
        this.grew(l, granted);
      }
    }
    slots.forEach((l, j) => {
      const granted = res[i++];
      if (granted === 0) l.deniedUntil = deniedUntil;
      else {
        for (let n = 0; n < granted; n++) l.members.push(`L:${this.edgeId}:${firsts[j] + n}`);
        l.validUntil = validUntil;
        this.grew(l, granted);
      }
    });
  }

  /** After a grant: the next one asks for twice as much, up to the cap. */
  private grew(l: Lease, calls: number): void {
    l.lastGrantCalls = calls;
    l.wantCalls = Math.min(MAX_LEASE_CALLS, l.wantCalls * 2);
  }

  /** Sends the costs of the calls completed in this pass of the event loop, one script per organisation. */
  private flush(): void {
    this.flushScheduled = false;
    if (this.toConvert.size === 0) return;
    const byOrg = groupByOrg([...this.toConvert]);
    this.toConvert.clear();
    for (const leases of byOrg.values()) {
      const keys = [leases[0].rKey];
      const args: (string | number)[] = [];
      const amounts = leases.map((l) => {
        const amount = l.pending;
        l.pending = 0n;
        l.held -= amount;
        keys.push(l.hKey);
        args.push(l.id, amount.toString());
        return amount;
      });
      const sent = this.redis.evalScript(CONVERT_SCRIPT, keys, args).then((raw) => {
        const res = raw as number[];
        leases.forEach((l, j) => {
          l.unconfirmed -= amounts[j];
          const [live, spent, leased] = res.slice(3 * j, 3 * j + 3);
          if (live === -1) return this.drop(l, 'its budget counter is gone from Redis');
          l.known = { ...l.known, spent: BigInt(spent), leased: BigInt(leased) };
          if (live === 0) this.drop(l, 'Redis swept it before it was renewed');
        });
      });
      this.background(
        sent.catch((err: Error) => {
          leases.forEach((l, j) => {
            l.unconfirmed -= amounts[j];
            this.drop(l, 'a conversion failed');
          });
          throw err;
        }),
        'costs of calls under a budget lease not converted (the ledger has the calls; reconciliation reports the drift)',
      );
    }
  }

  /** Moves the deadlines of this edge's leases on; a lease Redis swept meanwhile is dropped. */
  private renew(now: number): void {
    const byOrg = groupByOrg([...this.leases.values()].filter((l) => !l.dropped && (l.kind === 'budget' ? l.held > 0n : l.kind === 'slots' && l.members.length > 0)));
    for (const leases of byOrg.values()) {
      const budgets = leases.filter((l): l is BudgetLease => l.kind === 'budget');
      const slots = leases.filter((l): l is SlotLease => l.kind === 'slots');
      const args: (string | number)[] = [now, now + this.ttlMs, budgets.length, ...budgets.map((l) => l.id)];
      for (const l of slots) args.push(l.members.length, ...l.members);
      const renewed = this.redis.evalScript(RENEW_SCRIPT, [leases[0].rKey, leases[0].zKey, ...slots.map((l) => l.key)], args).then((raw) => {
        const res = raw as number[];
        const validUntil = now + this.ttlMs - this.marginMs;
        [...budgets, ...slots].forEach((l, j) => {
          if (res[j] === 1) l.validUntil = Math.max(l.validUntil, validUntil);
          else this.drop(l, 'Redis swept it before it was renewed');
        });
      });
      this.background(renewed, 'leases not renewed (they stop admitting calls before Redis would sweep them)');
    }
  }

  /** Gives back leases no call has used for the idle time, and window leases whose window has ended. */
  private returnIdle(now: number): void {
    const idleMs = this.config.edge.leaseIdleMs;
    const done: Lease[] = [];
    for (const l of this.leases.values()) {
      const quiet = now - l.lastUsed >= idleMs || (l.kind === 'window' && now >= l.windowStart + l.windowMs);
      if (!quiet || l.acquiring) continue;
      if (l.kind === 'budget' && (l.inFlight > 0 || l.pending > 0n || l.unconfirmed > 0n)) continue;
      if (l.kind === 'slots' && l.inUse > 0) continue;
      this.leases.delete(l.mapKey);
      l.dropped = true;
      done.push(l);
    }
    if (done.length > 0) this.background(this.release(done, now), 'idle leases not given back (Redis sweeps them at their deadline)');
  }

  /** No more calls under this lease; what it holds unused goes back. */
  private drop(l: Lease, why: string): void {
    if (l.dropped) return;
    l.dropped = true;
    if (this.leases.get(l.mapKey) === l) this.leases.delete(l.mapKey);
    this.logger.warn(`lease ${l.mapKey} dropped: ${why}`);
    this.background(this.release([l], Date.now()), 'a dropped lease not given back');
  }

  /** Gives back what leases hold unused (calls in flight keep theirs), one script per organisation. */
  private async release(leases: Lease[], now: number): Promise<void> {
    const batches = new Map<string, ReleaseBatch>();
    for (const l of leases) {
      let b = batches.get(l.orgId);
      if (!b) batches.set(l.orgId, (b = { rKey: l.rKey, zKey: l.zKey, budgets: [], windows: [], slots: [] }));
      if (l.kind === 'budget') {
        // Redis drops the record once it holds nothing (conversions sent earlier ran before this).
        const amount = l.free > 0n ? l.free : 0n;
        l.free -= amount;
        l.held -= amount;
        if (l.lastGrantCalls > 0 && (amount > 0n || l.held === 0n)) b.budgets.push({ lease: l, amount });
      } else if (l.kind === 'window') {
        if (l.free > 0 && now < l.windowStart + 2 * l.windowMs) b.windows.push({ key: l.key, calls: l.free });
        l.free = 0;
      } else {
        const spare = l.members.splice(l.inUse);
        if (spare.length > 0) b.slots.push({ key: l.key, members: spare });
      }
    }
    await Promise.all(
      [...batches.values()].map((b) => {
        if (b.budgets.length + b.windows.length + b.slots.length === 0) return undefined;
        const keys = [b.rKey, b.zKey, ...b.budgets.map((x) => x.lease.hKey), ...b.windows.map((x) => x.key), ...b.slots.map((x) => x.key)];
        const args: (string | number)[] = [b.budgets.length, b.windows.length, b.slots.length];
        for (const x of b.budgets) args.push(x.lease.id, x.amount.toString());
        for (const x of b.windows) args.push(x.calls);
        for (const x of b.slots) args.push(x.members.length, ...x.members);
        return this.redis.evalScript(RELEASE_SCRIPT, keys, args);
      }),
    );
  }

  private background(work: Promise<unknown>, what: string): void {
    const tracked = work.catch((err: Error) => this.logger.error(`${what}: ${err.message}`)).finally(() => this.inBackground.delete(tracked));
    this.inBackground.add(tracked);
  }

  /** Resolves once the Redis work of calls completed so far (and of refills and returns started so far) is done. */
  async settled(): Promise<void> {
    await new Promise((resolve) => setImmediate(resolve)); // conversions are sent after the event loop's I/O pass
    while (this.inBackground.size > 0) await Promise.all([...this.inBackground]);
  }
}

function freeOf(l: Lease): number | bigint {
  if (l.kind === 'slots') return l.members.length - l.inUse;
  return l.free;
}

/** What a lease has left, in calls. */
function freeCalls(l: Lease): number {
  if (l.kind === 'budget') return Number(l.free / (l.unit > 0n ? l.unit : 1n));
  return Number(freeOf(l));
}

function groupByOrg<L extends Lease>(leases: L[]): Map<string, L[]> {
  const out = new Map<string, L[]>();
  for (const l of leases) {
    const list = out.get(l.orgId);
    if (list) list.push(l);
    else out.set(l.orgId, [l]);
  }
  return out;
}
