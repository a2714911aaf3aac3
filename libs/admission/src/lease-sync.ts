import { Logger } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { LARGEST_SCRIPT_AMOUNT, RedisService } from '@tollgate/redis';
import type { AdmissionClock } from './admission-clock';
import { LEASE_GRANT, LEASE_RELEASE, LEASE_RENEW } from './admission-scripts';
import {
  BudgetLease,
  DENIED_MS,
  Lease,
  LeaseRequest,
  LEASE_SHARE,
  MAX_LEASE_CALLS,
  MIN_LEASE_CALLS,
  SlotLease,
  WindowLease,
  groupByOrg,
} from './lease-kinds';

/** What one release script gives back for one organisation. */
interface ReleaseBatch {
  rKey: string;
  zKey: string;
  budgets: { lease: BudgetLease; amount: bigint }[];
  windows: { key: string; calls: number }[];
  slots: { key: string; members: string[] }[];
}

/**
 * The Redis side of an edge's leases: grants, renewals and returns, each one
 * script per organisation. It updates the leases it is handed; the lease book decides when.
 */
export class LeaseSync {
  private readonly logger = new Logger(LeaseSync.name);
  private readonly edgeId = randomBytes(6).toString('hex');
  private seq = 0;
  /** Redis work no call waited for (refills, renewals, returns), until it is done. */
  private readonly inBackground = new Set<Promise<unknown>>();
  /** Local admission stops this long before Redis would sweep a lease that was not renewed. */
  readonly marginMs: number;

  /**
   * @param epochKeyOf the epoch of an organisation's shard: without it Redis lost its data (and every lease with it)
   * @param epochLost called when a grant or renewal finds the epoch gone
   */
  constructor(
    private readonly redis: RedisService,
    private readonly clock: AdmissionClock,
    readonly ttlMs: number,
    private readonly epochKeyOf: (orgId: string) => string,
    private readonly drop: (l: Lease, why: string) => void,
    private readonly epochLost: () => void,
  ) {
    this.marginMs = Math.max(Math.floor(ttlMs / 4), 2000);
  }

  /** A new budget lease's id: its record in the organisation's reservations. */
  newLeaseId(): string {
    return `L:${this.edgeId}:${++this.seq}`;
  }

  /** Asks Redis for grants on these leases (all of one organisation) in one script, and books what came. */
  async grant(req: LeaseRequest, ask: Lease[], now: number): Promise<void> {
    const budgets = ask.filter((l): l is BudgetLease => l.kind === 'budget');
    const windows = ask.filter((l): l is WindowLease => l.kind === 'window');
    const slots = ask.filter((l): l is SlotLease => l.kind === 'slots');
    const deadline = now + this.ttlMs;
    const firsts: number[] = [];
    for (const l of slots) {
      firsts.push(this.seq + 1);
      this.seq += l.wantCalls;
    }
    const res = await this.redis.run(LEASE_GRANT, {
      rKey: req.rKey,
      zKey: req.zKey,
      epochKey: this.epochKeyOf(req.orgId),
      now,
      deadline,
      share: LEASE_SHARE,
      budgets: budgets.map((l) => {
        const unit = req.estimate > l.unit ? req.estimate : l.unit;
        return {
          id: l.id,
          counterKey: l.hKey,
          // Bounded by what a script handles exactly (a soft budget grants what is asked).
          // The lease's total too: a release of more than a script handles would be refused.
          want: atMostLargest(unit * BigInt(l.wantCalls), l.held),
          minGrant: atMostLargest(unit * BigInt(MIN_LEASE_CALLS)),
          limit: l.limit,
          hard: l.hard,
        };
      }),
      windows: windows.map((l) => ({ ...l, want: l.wantCalls, minGrant: MIN_LEASE_CALLS })),
      slots: slots.map((l, j) => ({
        key: l.key,
        max: l.max,
        want: l.wantCalls,
        minGrant: MIN_LEASE_CALLS,
        memberPrefix: `L:${this.edgeId}:`,
        firstMember: firsts[j],
      })),
    });
    if (res.kind === 'epoch-lost') return this.epochLost();
    const validUntil = now + this.ttlMs - this.marginMs;
    const deniedUntil = this.clock.now() + DENIED_MS;
    budgets.forEach((l, j) => {
      const grant = res.budgets[j];
      if (grant.kind === 'no-counter') return; // the call is checked in Redis, which seeds it
      l.known = { ...grant.counter };
      if (grant.granted === 0n) {
        l.deniedUntil = deniedUntil;
        return;
      }
      l.held += grant.granted;
      l.free += grant.granted;
      l.validUntil = validUntil;
      grew(l, Number(grant.granted / (l.unit > 0n ? l.unit : 1n)));
    });
    windows.forEach((l, j) => {
      const granted = res.windows[j];
      if (granted === 0) l.deniedUntil = deniedUntil;
      else {
        l.free += granted;
        l.validUntil = l.windowStart + l.windowMs;
        grew(l, granted);
      }
    });
    slots.forEach((l, j) => {
      const granted = res.slots[j];
      if (granted === 0) l.deniedUntil = deniedUntil;
      else {
        for (let n = 0; n < granted; n++) l.members.push(`L:${this.edgeId}:${firsts[j] + n}`);
        l.validUntil = validUntil;
        grew(l, granted);
      }
    });
  }

  /** Moves the deadlines of these leases on; a lease Redis swept meanwhile is dropped. */
  renew(all: Lease[], now: number): void {
    const byOrg = groupByOrg(
      all.filter((l) => !l.dropped && (l.kind === 'budget' ? l.held > 0n : l.kind === 'slots' && l.members.length > 0)),
    );
    for (const leases of byOrg.values()) {
      const budgets = leases.filter((l): l is BudgetLease => l.kind === 'budget');
      const slots = leases.filter((l): l is SlotLease => l.kind === 'slots');
      const renewed = this.redis
        .run(LEASE_RENEW, {
          rKey: leases[0].rKey,
          zKey: leases[0].zKey,
          epochKey: this.epochKeyOf(leases[0].orgId),
          now,
          deadline: now + this.ttlMs,
          budgetLeaseIds: budgets.map((l) => l.id),
          slots: slots.map((l) => ({ key: l.key, members: l.members })),
        })
        .then((res) => {
          if (res.kind === 'epoch-lost') return this.epochLost();
          const validUntil = now + this.ttlMs - this.marginMs;
          const whole = [...res.budgets, ...res.slots];
          [...budgets, ...slots].forEach((l, j) => {
            if (whole[j]) l.validUntil = Math.max(l.validUntil, validUntil);
            else this.drop(l, 'Redis swept it before it was renewed');
          });
        });
      this.background(renewed, 'leases not renewed (they stop admitting calls before Redis would sweep them)');
    }
  }

  /** Gives back what leases hold unused (calls in flight keep theirs), one script per organisation. */
  async release(leases: Lease[], now: number): Promise<void> {
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
        return this.redis.run(LEASE_RELEASE, {
          rKey: b.rKey,
          zKey: b.zKey,
          budgets: b.budgets.map((x) => ({ id: x.lease.id, counterKey: x.lease.hKey, amount: x.amount })),
          windows: b.windows,
          slots: b.slots,
        });
      }),
    );
  }

  /** Runs work no call waits for; a failure is logged with what it means. */
  background(work: Promise<unknown>, what: string): void {
    const tracked = work
      .catch((err: Error) => this.logger.error(`${what}: ${err.message}`))
      .finally(() => this.inBackground.delete(tracked));
    this.inBackground.add(tracked);
  }

  /** Resolves once the background work started so far is done. */
  async settled(): Promise<void> {
    while (this.inBackground.size > 0) await Promise.all([...this.inBackground]);
  }
}

/** `v`, at most what keeps `held + v` within the largest amount a script handles. */
function atMostLargest(v: bigint, held = 0n): bigint {
  const cap = LARGEST_SCRIPT_AMOUNT - held;
  return v > cap ? cap : v;
}

/** After a grant: the next one asks for twice as much, up to the cap. */
function grew(l: Lease, calls: number): void {
  l.lastGrantCalls = calls;
  l.wantCalls = Math.min(MAX_LEASE_CALLS, l.wantCalls * 2);
}
