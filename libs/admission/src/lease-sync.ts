import { Logger } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { RedisService } from '@tollgate/redis';
import { LEASE_GRANT_SCRIPT, LEASE_RELEASE_SCRIPT, LEASE_RENEW_SCRIPT } from './admission-scripts';
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
   * @param epochKey the deployment's epoch: without it Redis lost its data (and every lease with it)
   * @param epochLost called when a grant or renewal finds the epoch gone
   */
  constructor(
    private readonly redis: RedisService,
    readonly ttlMs: number,
    private readonly epochKey: string,
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
    const keys = [req.rKey, req.zKey];
    const args: (string | number)[] = [now, deadline, LEASE_SHARE, budgets.length, windows.length, slots.length];
    for (const l of budgets) {
      const unit = req.estimate > l.unit ? req.estimate : l.unit;
      keys.push(l.hKey);
      args.push(
        l.id,
        (unit * BigInt(l.wantCalls)).toString(),
        (unit * BigInt(MIN_LEASE_CALLS)).toString(),
        l.limit.toString(),
        l.hard ? '1' : '0',
      );
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
    keys.push(this.epochKey);
    const res = (await this.redis.evalScript(LEASE_GRANT_SCRIPT, keys, args)) as number[];
    if (res[0] === -2) return this.epochLost();
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
      grew(l, Number(g / (l.unit > 0n ? l.unit : 1n)));
    }
    for (const l of windows) {
      const granted = res[i++];
      if (granted === 0) l.deniedUntil = deniedUntil;
      else {
        l.free += granted;
        l.validUntil = l.windowStart + l.windowMs;
        grew(l, granted);
      }
    }
    slots.forEach((l, j) => {
      const granted = res[i++];
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
      const args: (string | number)[] = [now, now + this.ttlMs, budgets.length, ...budgets.map((l) => l.id)];
      for (const l of slots) args.push(l.members.length, ...l.members);
      const renewed = this.redis
        .evalScript(
          LEASE_RENEW_SCRIPT,
          [leases[0].rKey, leases[0].zKey, ...slots.map((l) => l.key), this.epochKey],
          args,
        )
        .then((raw) => {
          const res = raw as number[];
          if (res[0] === -2) return this.epochLost();
          const validUntil = now + this.ttlMs - this.marginMs;
          [...budgets, ...slots].forEach((l, j) => {
            if (res[j] === 1) l.validUntil = Math.max(l.validUntil, validUntil);
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
        const keys = [
          b.rKey,
          b.zKey,
          ...b.budgets.map((x) => x.lease.hKey),
          ...b.windows.map((x) => x.key),
          ...b.slots.map((x) => x.key),
        ];
        const args: (string | number)[] = [b.budgets.length, b.windows.length, b.slots.length];
        for (const x of b.budgets) args.push(x.lease.id, x.amount.toString());
        for (const x of b.windows) args.push(x.calls);
        for (const x of b.slots) args.push(x.members.length, ...x.members);
        return this.redis.evalScript(LEASE_RELEASE_SCRIPT, keys, args);
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

/** After a grant: the next one asks for twice as much, up to the cap. */
function grew(l: Lease, calls: number): void {
  l.lastGrantCalls = calls;
  l.wantCalls = Math.min(MAX_LEASE_CALLS, l.wantCalls * 2);
}
