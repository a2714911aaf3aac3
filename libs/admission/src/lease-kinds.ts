import { BoundBudget } from '@tollgate/budget';
import { Micros } from '@tollgate/kernel';
import { AdmissionPlan } from '@tollgate/rate-limit';

/** A lease takes at most 1/LEASE_SHARE of what is left, so edges leasing at once leave room for each other. */
export const LEASE_SHARE = 8;
/** Calls a first lease asks for; each refill asks for twice as many, up to MAX_LEASE_CALLS. */
export const FIRST_LEASE_CALLS = 16;
export const MAX_LEASE_CALLS = 1024;
/** A grant smaller than this many calls is not worth holding: the call goes to Redis instead. */
export const MIN_LEASE_CALLS = 2;
/** After Redis refused a grant (a limit is near), calls on that limit go one by one for this long. */
export const DENIED_MS = 1000;

export interface LeaseBase {
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

/** A block of one budget counter's allowance (its `leased` field), in micro-units. */
export interface BudgetLease extends LeaseBase {
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
  /** Cost of completed calls whose conversion has not been answered: added to `known.spent` in standings. */
  unconfirmed: bigint;
  known: { spent: bigint; reserved: bigint; leased: bigint };
}

/** Calls of one rate-limit window, counted in Redis when granted. */
export interface WindowLease extends LeaseBase {
  kind: 'window';
  key: string;
  prevKey: string;
  limit: number;
  windowMs: number;
  windowStart: number;
  free: number;
}

/** Slots of one concurrency set, held as members that expire at the lease's deadline. */
export interface SlotLease extends LeaseBase {
  kind: 'slots';
  key: string;
  max: number;
  members: string[];
  inUse: number;
}

export type Lease = BudgetLease | WindowLease | SlotLease;

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

// A call looks up a dozen leases: the budget, window and slot records it names are kept per rule
// and period (BudgetService, RateLimitService), so each one's map key is made once, not per call.
const LEASE_KEYS = new WeakMap<object, string>();

/** The lease map key of each kind: a change of limit makes a new lease. */
export function budgetLeaseKey(b: BoundBudget): string {
  let key = LEASE_KEYS.get(b);
  if (key === undefined) LEASE_KEYS.set(b, (key = `${b.hashKey}|${b.rule.limitMicros}|${b.rule.mode}`));
  return key;
}

export function windowLeaseKey(w: AdmissionPlan['windows'][number]): string {
  let key = LEASE_KEYS.get(w);
  if (key === undefined) LEASE_KEYS.set(w, (key = `${w.key}|${w.limit}`));
  return key;
}

export function slotLeaseKey(s: AdmissionPlan['slots'][number]): string {
  let key = LEASE_KEYS.get(s);
  if (key === undefined) LEASE_KEYS.set(s, (key = `${s.key}|${s.max}`));
  return key;
}

export function newBudgetLease(base: LeaseBase, b: BoundBudget, id: string): BudgetLease {
  return {
    ...base,
    kind: 'budget',
    id,
    hKey: b.hashKey,
    limit: b.rule.limitMicros,
    hard: b.rule.mode === 'HARD',
    unit: 1n,
    held: 0n,
    free: 0n,
    inFlight: 0,
    unconfirmed: 0n,
    known: { spent: 0n, reserved: 0n, leased: 0n },
  };
}

export function newWindowLease(base: LeaseBase, w: AdmissionPlan['windows'][number]): WindowLease {
  return {
    ...base,
    kind: 'window',
    key: w.key,
    prevKey: w.prevKey,
    limit: w.limit,
    windowMs: w.windowMs,
    windowStart: w.windowStart,
    free: 0,
  };
}

export function newSlotLease(base: LeaseBase, s: AdmissionPlan['slots'][number]): SlotLease {
  return { ...base, kind: 'slots', key: s.key, max: s.max, members: [], inUse: 0 };
}

/** What a lease has unused: micro-units, window calls or free slots. */
export function freeOf(l: Lease): number | bigint {
  if (l.kind === 'slots') return l.members.length - l.inUse;
  return l.free;
}

/** What a lease has left, in calls. */
export function freeCalls(l: Lease): number {
  if (l.kind === 'budget') return Number(l.free / (l.unit > 0n ? l.unit : 1n));
  return Number(freeOf(l));
}

/**
 * The lease can admit a call of this estimate now: it is valid, still holds allowance in Redis,
 * and what it has unused covers the estimate. A free call (estimate 0) is no exception: it needs a
 * lease that holds something, as a priced one does, or goes to Redis, which refuses it only on a
 * budget already above its limit (docs/architecture.md, "Admission leases").
 */
export function covers(l: Lease, estimate: Micros, now: number): boolean {
  if (l.dropped || now >= l.validUntil) return false;
  if (l.kind === 'budget') return l.held > 0n && l.free >= estimate;
  return freeOf(l) >= 1;
}

/** A call in flight or a cost not yet confirmed keeps the lease from going back. */
export function busy(l: Lease): boolean {
  if (l.kind === 'budget') return l.inFlight > 0 || l.unconfirmed > 0n;
  if (l.kind === 'slots') return l.inUse > 0;
  return false;
}

/** A lease that outlived its validity without renewal: Redis may have swept it (windows simply end). */
export function outlived(l: Lease, now: number): boolean {
  return l.lastGrantCalls > 0 && now >= l.validUntil && l.kind !== 'window';
}

export function groupByOrg<L extends Lease>(leases: L[]): Map<string, L[]> {
  const out = new Map<string, L[]>();
  for (const l of leases) {
    const list = out.get(l.orgId);
    if (list) list.push(l);
    else out.set(l.orgId, [l]);
  }
  return out;
}
