// The model-based run of the money path: fast-check generates worlds (organisations with budgets
// at every level, hard and soft, every period, limits from 0 to the largest amount, concurrency
// and calls-per-window limits, price books: free, per call, per output token, reported cost,
// rules taking effect or ending later) and command sequences (admit at boundary amounts, call a
// priced tool, complete at 0, part or all of the estimate or with a result the price book prices,
// complete calls of several organisations in one turn, cancel,
// crash an edge, stall an edge's event loop past the TTL while another edge admits a call, let
// time pass the reservation TTL, plant malformed records, reconcile, lose
// Redis and rebuild from the ledger, return leases), runs each command on MoneyModel and on the
// real services (MoneySystem), and compares answers, counters and usage events after every step.
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import fc from 'fast-check';
import {
  AdmissionAnswer,
  BudgetSpec,
  CallOutcome,
  budgetsOfCaller,
  KEYS_PER_ORG,
  LARGEST_MICROS,
  MODEL_RESERVATION_TTL_MS,
  MoneyModel,
  ModelCall,
  OrgSpec,
  Period,
  PricedSettlement,
  PriceSpec,
  refPriceOf,
  Scope,
  ToolSpec,
  WorldSpec,
} from './money-model';
import { CompletedCall, MoneySystem, World } from './money-system';

/** What a command runs against: the real services and the world of this sequence. */
export interface Real {
  sys: MoneySystem;
  world: World;
  /** What ran so far (all sequences of a run). */
  counter: RunCounts;
}

type Cmd = fc.AsyncCommand<MoneyModel, Real>;

/** What a run did: steps, sequences, and each command's (and admission answer's) count, to show it explored. */
export interface RunCounts {
  steps: number;
  sequences: number;
  byCommand: Record<string, number>;
  /** Milliseconds spent per command kind (its run and the comparison after it), and creating worlds. */
  msByCommand: Record<string, number>;
}

function tally(counter: RunCounts, what: string): void {
  counter.byCommand[what] = (counter.byCommand[what] ?? 0) + 1;
}

/** A discrepancy between the model and the real money path, with what each side said. */
export class MoneyDiscrepancy extends Error {}

function differ(what: string, model: unknown, real: unknown): never {
  throw new MoneyDiscrepancy(`${what}: model ${show(model)}, real ${show(real)}`);
}

function show(v: unknown): string {
  return JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? `${x}n` : x instanceof Map ? [...x.entries()] : x));
}

/**
 * The run keeps a virtual clock (the sweep after the TTL is a step): the edge's clock follows the
 * model's, and its lease renewals and idle returns due on the way run at their times.
 */
async function clock(m: MoneyModel, r: Real): Promise<number> {
  await r.sys.at(m.now);
  return m.now;
}

/**
 * Compares everything observable after a step: every budget counter (spent exactly; reserved
 * exactly without leases, at least what calls in flight hold with them), and every organisation's
 * usage events (ledger plus outbox, each exactly once, with its cost).
 */
export async function verify(m: MoneyModel, r: Real, leasesReturned = false): Promise<void> {
  m.checkInvariants();
  const orgs = m.spec.orgs.map((o, org) => org);
  // Everything is read first (in parallel), then compared.
  const [counters, outboxes] = await Promise.all([
    Promise.all(
      orgs.map((org) => Promise.all(m.spec.orgs[org].budgets.map((_, i) => r.sys.counter(r.world, org, i, m.now)))),
    ),
    Promise.all(orgs.map((org) => r.sys.outbox(r.world, org))),
  ]);
  const unswept = r.sys.leases
    ? await unsweptUnderLeases(m, r)
    : { byBudget: new Map<string, bigint>(), dead: new Map<string, bigint>() };
  // Under leases, Redis holds more than the calls in flight by what this edge's leases hold unused.
  let unusedTotal = 0n;
  let deadTotal = 0n;
  for (const org of orgs) {
    counters[org].forEach((got, i) => {
      const want = m.counter(org, i);
      const where = `org ${org} budget ${i} (${show(m.spec.orgs[org].budgets[i])})`;
      if (want === null || got === null || want === 'corrupt' || got === 'corrupt') {
        if (want !== got) differ(`${where} counter`, want, got);
        return;
      }
      if (got.spent !== want.spent) differ(`${where} spent`, want.spent, got.spent);
      // Allowance Redis frees at its next sweep of the org that the model freed already (see unsweptUnderLeases).
      const dead = unswept.dead.get(r.sys.counterKey(r.world, org, i, m.now)) ?? 0n;
      const later = (unswept.byBudget.get(`${org}/${i}`) ?? 0n) + dead;
      deadTotal += later;
      unusedTotal += got.reserved + got.leased - want.reserved - later;
      if (!r.sys.leases || leasesReturned) {
        if (got.reserved + got.leased !== want.reserved + later)
          differ(`${where} reserved+leased`, want.reserved + later, got);
      } else if (got.reserved + got.leased < want.reserved) {
        differ(`${where} reserved+leased (at least the calls in flight)`, want.reserved, got);
      }
    });
    const outbox = outboxes[org];
    const seen = new Map(outbox);
    for (const [id, cost] of r.sys.written(r.world, org)) {
      if (outbox.has(id)) differ(`org ${org} event ${id} both in the ledger and still in the outbox`, 1, 2);
      seen.set(id, cost);
    }
    if (seen.size !== m.events[org].size || [...m.events[org]].some(([id, cost]) => seen.get(id) !== cost))
      differ(`org ${org} usage events (ledger + outbox)`, m.events[org], seen);
  }
  // Which calls the edge renews no more: those whose renewal found part of their hold gone.
  for (const c of live(m))
    if ((c.lapsed === true) !== r.sys.lapsed(c.id))
      differ(`call ${c.id} lapsed (its hold renewed no more)`, c.lapsed === true, !c.lapsed);
  if (r.sys.leases && unusedTotal > r.sys.leaseHoldings() + deadTotal)
    differ(
      'allowance held in Redis beyond the calls in flight vs what the leases hold',
      r.sys.leaseHoldings(),
      unusedTotal,
    );
}

/**
 * Under leases, what Redis still holds that the model has freed: a reservation the model swept
 * (past its deadline) whose record Redis sweeps only at the org's next script that reaches its
 * budgets (an admission the edge's leases cover reaches none), per budget; and the leases of a
 * dead edge not yet swept, per counter key.
 */
async function unsweptUnderLeases(
  m: MoneyModel,
  r: Real,
): Promise<{ byBudget: Map<string, bigint>; dead: Map<string, bigint> }> {
  const swept = [...m.open.values()].filter((c) => !c.record && !c.leased && c.budgets.length > 0 && c.estimate > 0n);
  const [present, deadHeld] = await Promise.all([r.sys.recordsPresent(r.world, swept), r.sys.deadLeaseHoldings()]);
  const byBudget = new Map<string, bigint>();
  swept.forEach((c, j) => {
    if (!present[j]) return;
    for (const i of c.budgets) byBudget.set(`${c.org}/${i}`, (byBudget.get(`${c.org}/${i}`) ?? 0n) + c.estimate);
  });
  // A dead lease holds the calls that died on it too, which the model still counts until it sweeps them.
  const dead = new Map<string, bigint>();
  for (const c of m.open.values()) {
    if (!c.crashed || !c.leased || !c.record) continue;
    for (const i of c.budgets) {
      const key = r.sys.counterKey(r.world, c.org, i, m.now);
      if (deadHeld.has(key)) dead.set(key, (dead.get(key) ?? deadHeld.get(key)!) - c.estimate);
    }
  }
  for (const [key, held] of deadHeld) if (!dead.has(key)) dead.set(key, held);
  return { byBudget, dead };
}

/** Calls the model has in flight that an edge can still complete. */
function live(m: MoneyModel): ModelCall[] {
  return [...m.open.values()].filter((c) => !c.crashed);
}

type Amount = { fixed: bigint } | { nearLimit: bigint };

/** Admits a call of `amount`, or of what the tightest hard budget has left plus -1, 0 or 1. */
class AdmitCommand implements Cmd {
  constructor(
    readonly org: number,
    readonly key: number,
    readonly amount: Amount,
  ) {}
  check(m: Readonly<MoneyModel>) {
    return this.org < m.spec.orgs.length;
  }
  async run(m: MoneyModel, r: Real) {
    await this.admitAt(m, r, await clock(m, r));
  }
  /** Admits it at `now` (the edge's clock there already). */
  async admitAt(m: MoneyModel, r: Real, now: number) {
    const asked = 'fixed' in this.amount ? this.amount.fixed : this.nearLimit(m, this.amount.nearLimit);
    const largest = m.largestEstimate(this.org, this.key);
    const estimate = asked < largest ? asked : largest;
    const id = randomUUID();
    // The edge answers first: whether its leases covered the call is its choice, which the model
    // then holds to its own bound for leased calls (MoneyModel.admit).
    const got: AdmissionAnswer = await r.sys.admit(r.world, id, this.org, this.key, estimate, now);
    const leased = r.sys.underLease(id);
    const want = m.admit(id, this.org, this.key, estimate, false, leased);
    if (show(got) !== show(want))
      differ(`admit ${estimate} by org ${this.org} key ${this.key}${leased ? ' (under a lease)' : ''}`, want, got);
    if (leased) m.open.get(id)!.leased = true;
    tally(
      r.counter,
      `admit:${got.kind === 'counters-unavailable' ? got.reason : got.kind}${estimate === 0n ? ':0' : estimate === LARGEST_MICROS ? ':largest' : ''}${leased ? ':leased' : ''}`,
    );
  }
  private nearLimit(m: MoneyModel, delta: bigint): bigint {
    let room: bigint | null = null;
    for (const i of budgetsOfCaller(m.spec.orgs[this.org], this.key)) {
      const b = m.budgets[this.org][i];
      if (!b.spec.hard) continue;
      const left = b.spec.limit - b.spent - b.reserved;
      if (room === null || left < room) room = left;
    }
    const v = (room ?? 1000n) + delta;
    return v < 0n ? 0n : v > LARGEST_MICROS ? LARGEST_MICROS : v;
  }
  toString() {
    return `admit(org ${this.org}, key ${this.key}, ${show(this.amount)})`;
  }
}

/** Calls a tool of the world, priced by the organisation's price book as the edge prices it. */
class PricedAdmitCommand implements Cmd {
  constructor(
    readonly org: number,
    readonly key: number,
    readonly tool: number,
  ) {}
  check(m: Readonly<MoneyModel>) {
    return this.org < m.spec.orgs.length;
  }
  async run(m: MoneyModel, r: Real) {
    const now = await clock(m, r);
    const tool = m.spec.tools[this.tool % m.spec.tools.length];
    const free = refPriceOf(m.spec.orgs[this.org].prices, tool.name, m.now - m.start) === null;
    const id = randomUUID();
    const got = await r.sys.admitPriced(r.world, id, this.org, this.key, tool, now);
    const leased = r.sys.underLease(id);
    const want = m.admitPriced(id, this.org, this.key, tool, leased);
    if (show(got.answer) !== show(want))
      differ(
        `priced admit of ${tool.name} by org ${this.org} key ${this.key}${leased ? ' (under a lease)' : ''}`,
        want,
        got,
      );
    const call = m.open.get(id);
    if (leased) call!.leased = true;
    if (want.kind === 'admitted' && got.estimate !== call!.estimate)
      differ(`reservation of ${tool.name} (${show(call!.priced)})`, call!.estimate, got.estimate);
    const kind = got.answer.kind === 'counters-unavailable' ? got.answer.reason : got.answer.kind;
    tally(r.counter, `admit-priced:${kind}${free ? ':free' : ''}${leased ? ':leased' : ''}`);
  }
  toString() {
    return `admitPriced(org ${this.org}, key ${this.key}, tool ${this.tool})`;
  }
}

type Actual = 'zero' | 'all' | { part: number };

function actualOf(c: ModelCall, how: Actual): bigint {
  if (how === 'zero') return 0n;
  if (how === 'all') return c.estimate;
  return (c.estimate * BigInt(how.part)) / 1000n;
}

/**
 * Completes one call, or two of different organisations (when there are) in the same turn: a
 * call admitted at an estimate at `how` much of it, a priced call with the result `outcome`.
 */
class CompleteCommand implements Cmd {
  constructor(
    readonly picks: number[],
    readonly how: Actual,
    readonly outcome: { failed: boolean; tokensPerMille: number; reported: bigint | null },
  ) {}
  check(m: Readonly<MoneyModel>) {
    return live(m as MoneyModel).length > 0;
  }
  async run(m: MoneyModel, r: Real) {
    const now = await clock(m, r);
    const calls = live(m);
    const chosen = [calls[this.picks[0] % calls.length]];
    if (this.picks.length > 1) {
      const others = calls.filter((c) => c.org !== chosen[0].org);
      if (others.length > 0) chosen.push(others[this.picks[1] % others.length]);
    }
    const done: CompletedCall[] = chosen.map((c) => {
      if (!c.priced) return { id: c.id, org: c.org, key: c.key, actual: actualOf(c, this.how) };
      const outcome: CallOutcome = {
        failed: this.outcome.failed,
        tokens: Math.floor((c.priced.tool.cap * this.outcome.tokensPerMille) / 1000),
        reported: this.outcome.reported,
      };
      return { id: c.id, org: c.org, key: c.key, outcome };
    });
    // The edge completes first: whether a top-up was admitted under its leases is its choice
    // (MoneyModel.admit holds it to the model's bound for leased calls). The model's top-ups are
    // admitted before its settlements, as the edge's are (each when its result arrives).
    const real = await r.sys.complete(r.world, done, now);
    const priced = new Map<string, PricedSettlement>();
    done.forEach((d, j) => {
      if (d.outcome) priced.set(d.id, m.pricePriced(d.id, d.outcome, randomUUID(), real[j].topUpUnderLease));
    });
    const want = done.map((d) => {
      const p = priced.get(d.id);
      if (!p) {
        m.complete(d.id, d.actual!, d.actual!);
        return d.actual!;
      }
      tally(r.counter, `complete-priced${p.topUp ? ':top-up' : ''}`);
      m.completePriced(d.id, p);
      return p.cost;
    });
    const got = real.map((c) => c.cost);
    if (show(got) !== show(want)) differ(`costs of ${show(done)}`, want, got);
  }
  toString() {
    return `complete(${this.picks.join('+')}, ${show(this.how)}, ${show(this.outcome)})`;
  }
}

class CancelCommand implements Cmd {
  constructor(readonly pick: number) {}
  check(m: Readonly<MoneyModel>) {
    return live(m as MoneyModel).length > 0;
  }
  async run(m: MoneyModel, r: Real) {
    await clock(m, r);
    const calls = live(m);
    const c = calls[this.pick % calls.length];
    m.complete(c.id, 0n, null);
    await r.sys.cancel(c.id);
  }
  toString() {
    return `cancel(${this.pick})`;
  }
}

/** The edge serving a call dies: the call never completes; its reservation and slot wait for the sweep. */
class CrashCommand implements Cmd {
  constructor(readonly pick: number) {}
  check(m: Readonly<MoneyModel>) {
    return live(m as MoneyModel).length > 0;
  }
  async run(m: MoneyModel, r: Real) {
    const calls = live(m);
    const c = calls[this.pick % calls.length];
    m.crash(c.id);
    r.sys.crash(c.id);
  }
  toString() {
    return `crash(${this.pick})`;
  }
}

/**
 * Under leases, kill -9 of the edge: every call in flight never completes, its leases are neither
 * renewed nor given back, and a new edge takes over; then the TTL passes, so Redis sweeps the dead
 * edge's leases and reservations at the org's next admission (the model its reservations).
 */
class CrashEdgeCommand implements Cmd {
  check() {
    return true;
  }
  async run(m: MoneyModel, r: Real) {
    const now = await clock(m, r);
    for (const c of live(m)) m.crash(c.id);
    await r.sys.crashEdge(now);
    m.edgeRestarted();
    m.advance(MODEL_RESERVATION_TTL_MS + 1);
    await clock(m, r);
  }
  toString() {
    return 'crashEdge';
  }
}

/**
 * The edge's event loop stalls past the TTL (a long GC pause, a CPU-starved container) while
 * another edge admits a call of `org`'s `key` (the same services here), which sweeps what the
 * stalled edge's calls held (their reservations if a budget applies, their slots if the key's
 * concurrency set is full). Then the stalled loop runs again: its late renewal finds each of its
 * holds whole (renewed) or with a part gone (lapsed: renewed no more, settled without its
 * reservation), whatever the hold's shape; verify compares which calls lapsed.
 */
class StallCommand implements Cmd {
  private readonly admit: AdmitCommand;
  constructor(
    readonly org: number,
    readonly key: number,
    readonly amount: Amount,
  ) {
    this.admit = new AdmitCommand(org, key, amount);
  }
  check(m: Readonly<MoneyModel>) {
    return this.admit.check(m) && live(m as MoneyModel).length > 0;
  }
  async run(m: MoneyModel, r: Real) {
    await clock(m, r);
    m.stall(MODEL_RESERVATION_TTL_MS + 1);
    r.sys.stall(m.now);
    await this.admit.admitAt(m, r, m.now);
    m.resume();
    await clock(m, r);
    tally(
      r.counter,
      `stall:${[...m.open.values()].filter((c) => c.lapsed && !c.crashed).length > 0 ? 'lapsed' : 'whole'}`,
    );
  }
  toString() {
    return `stall(then admit org ${this.org}, key ${this.key}, ${show(this.amount)})`;
  }
}

class AdvanceCommand implements Cmd {
  constructor(readonly ms: number) {}
  check() {
    return true;
  }
  async run(m: MoneyModel, r: Real) {
    m.advance(this.ms);
    await clock(m, r);
  }
  toString() {
    return `advance(${this.ms} ms)`;
  }
}

/** A malformed reservation record appears in an organisation's records: the sweep must move it aside, not fail. */
class PlantMalformedCommand implements Cmd {
  constructor(
    readonly org: number,
    readonly kind: number,
  ) {}
  check(m: Readonly<MoneyModel>) {
    return this.org < m.spec.orgs.length && !m.epochLost;
  }
  async run(m: MoneyModel, r: Real) {
    const now = await clock(m, r);
    m.plant(this.org);
    await r.sys.plantMalformed(r.world, this.org, this.kind, now);
  }
  toString() {
    return `plantMalformed(org ${this.org}, kind ${this.kind})`;
  }
}

/** The worker writes the outbox to the ledger and reconciles an organisation: it must find nothing to repair. */
class ReconcileCommand implements Cmd {
  constructor(readonly org: number) {}
  check(m: Readonly<MoneyModel>) {
    return this.org < m.spec.orgs.length && !m.epochLost;
  }
  async run(m: MoneyModel, r: Real) {
    const now = await clock(m, r);
    await r.sys.drain(r.world);
    const report = await r.sys.reconcileOrg(r.world, this.org, now);
    const found = {
      drift: report.drift.length,
      repaired: report.repaired.length,
      heldRepaired: report.heldRepaired?.length ?? 0,
      rebuilt: report.rebuilt.length,
      malformed: report.malformedRecords?.length ?? 0,
    };
    const { malformed, rebuilt } = r.sys.leases
      ? m.reconciledUnderLeases(this.org, await r.sys.plantedUnswept(r.world, this.org))
      : m.reconciled(this.org);
    const want = { drift: 0, repaired: 0, heldRepaired: 0, rebuilt, malformed };
    if (show(found) !== show(want)) differ(`reconcile org ${this.org} (${show(report)})`, want, found);
    if (found.malformed > 0) tally(r.counter, `reconcile:malformed${r.sys.leases ? ':leased' : ''}`);
  }
  toString() {
    return `reconcile(org ${this.org})`;
  }
}

/**
 * A budget counter's field stops being an integer (a bad restore, a hand edit), with nothing in
 * flight on it: admissions on it are refused (COUNTERS_UNAVAILABLE) before anything is written,
 * other budgets and organisations go on, and reconciliation rebuilds it from the ledger.
 */
class CorruptCounterCommand implements Cmd {
  constructor(
    readonly org: number,
    readonly budget: number,
  ) {}
  check(m: Readonly<MoneyModel>) {
    return this.org < m.spec.orgs.length && (m as MoneyModel).canCorrupt(this.org, this.budget);
  }
  async run(m: MoneyModel, r: Real) {
    const now = await clock(m, r);
    if (await r.sys.corruptCounter(r.world, this.org, this.budget, now)) m.corrupt(this.org, this.budget);
    else tally(r.counter, 'corruptCounter:leased');
  }
  toString() {
    return `corruptCounter(org ${this.org}, budget ${this.budget})`;
  }
}

/** Redis loses every key (the worker had written the outbox to the ledger): calls that need Redis are refused. */
class LoseRedisCommand implements Cmd {
  check(m: Readonly<MoneyModel>) {
    return !m.epochLost;
  }
  async run(m: MoneyModel, r: Real) {
    await r.sys.drain(r.world);
    await r.sys.loseRedis();
    m.loseRedis();
    // Under leases the edge learns of the loss at its next renewal, admitting against what its
    // leases hold until then: the model lets that renewal happen (and window leases end) first.
    if (r.sys.leases) {
      m.advance(MODEL_RESERVATION_TTL_MS + 1);
      await clock(m, r);
    }
  }
  toString() {
    return 'loseRedis';
  }
}

/**
 * Redis restarts without losing anything it acknowledged: standalone, killed (-9) and restarted
 * from its append-only file, synced on every write; a cluster, a master failed over as planned or
 * a replica killed and restarted. The model does not change: every counter, record and usage
 * event must read as before, and calls go on being admitted and completed after it.
 */
class RestartRedisCommand implements Cmd {
  check() {
    return true;
  }
  async run(m: MoneyModel, r: Real) {
    await clock(m, r);
    tally(r.counter, `restartRedis:${await r.sys.restartRedis()}`);
  }
  toString() {
    return 'restartRedis';
  }
}

/** The worker rebuilds the counters from the ledger (events written since the loss included) and sets a new epoch. */
class RebuildCommand implements Cmd {
  check(m: Readonly<MoneyModel>) {
    return m.epochLost;
  }
  async run(m: MoneyModel, r: Real) {
    await r.sys.drain(r.world);
    await r.sys.rebuild(r.world, m.now);
    m.rebuild();
  }
  toString() {
    return 'rebuildFromLedger';
  }
}

/**
 * The edge gives back what its leases hold unused: Redis then holds exactly what calls in flight
 * reserved. Only with no call in flight under a lease: a lease given back with calls on it is no
 * longer renewed, so Redis sweeps their allowance at the lease's deadline, which the model does not know.
 */
class ReturnLeasesCommand implements Cmd {
  check(m: Readonly<MoneyModel>) {
    return !live(m as MoneyModel).some((c) => c.leased);
  }
  async run(m: MoneyModel, r: Real) {
    await clock(m, r);
    await r.sys.returnLeases();
    await verify(m, r, true);
  }
  toString() {
    return 'returnLeases';
  }
}

/** The tools of a world: an output-token cap and an observed p99 (none, under, at or over the cap). */
const toolsArb: fc.Arbitrary<ToolSpec[]> = fc.tuple(
  ...['search', 'fetch'].map((name) =>
    fc.record({
      name: fc.constant(name),
      cap: fc.integer({ min: 1, max: 50 }),
      p99: fc.option(fc.integer({ min: 0, max: 30 }), { freq: 3 }),
    }),
  ),
);

/**
 * A price book: free (no rule), or rules of every kind (per call, per output token, reported cost,
 * charged on failure or not, all at 0 too), some taking effect later in the sequence and some
 * ended later (virtual ms after the world's start).
 */
function priceBookArb(): fc.Arbitrary<PriceSpec[]> {
  const later = [0, 30_000, 200_000];
  const rule = fc.record({
    pattern: fc.constantFrom('*', '*', 'search', 'se*', 'fetch'),
    perCall: fc.oneof(fc.constantFrom(0n, 1n), fc.bigInt(2n, 5_000n)),
    perToken: fc.oneof({ arbitrary: fc.bigInt(1n, 20n), weight: 2 }, { arbitrary: fc.constant(0n), weight: 1 }),
    reportedCap: fc.option(fc.bigInt(1n, 5_000n), { freq: 2 }),
    chargeFailed: fc.boolean(),
    from: fc.constantFrom(0, ...later),
    until: fc.oneof(
      { arbitrary: fc.constant(null), weight: 3 },
      { arbitrary: fc.constantFrom(...later.slice(1).map((t) => 2 * t)), weight: 1 },
    ),
  });
  // Rules of one pattern from the same instant are generated too: the one added later wins.
  return fc
    .oneof(
      { arbitrary: fc.array(rule, { minLength: 1, maxLength: 3 }), weight: 4 },
      { arbitrary: fc.constant([]), weight: 1 },
    )
    .map((rules) => rules.map((r) => ({ ...r, until: r.until !== null && r.until > r.from ? r.until : null })));
}

const PERIODS: Period[] = ['DAY', 'WEEK', 'MONTH', 'QUARTER', 'TOTAL'];

/** Limits; under leases more of them large, since a lease takes an eighth of what is left and at least two calls' worth. */
const limitArb = (leases: boolean) =>
  fc.oneof(
    { arbitrary: fc.constantFrom(0n, 1n, LARGEST_MICROS), weight: 1 },
    { arbitrary: fc.bigInt(2n, 20_000n), weight: leases ? 1 : 3 },
    { arbitrary: fc.bigInt(20_001n, 10_000_000n), weight: leases ? 3 : 1 },
  );

function budgetArb(scope: Scope, who: number, leases: boolean): fc.Arbitrary<BudgetSpec | null> {
  return fc.option(
    fc.record({
      scope: fc.constant(scope),
      who: fc.constant(who),
      period: fc.constantFrom(...PERIODS),
      limit: limitArb(leases),
      hard: fc.constantFrom(true, true, false),
    }),
    { freq: 2 },
  );
}

/** An organisation: budgets at each level (some absent), rate limits (some absent). */
function orgArb(leases: boolean): fc.Arbitrary<OrgSpec> {
  // Under leases some rate limits are high enough to be leased (16 calls or more).
  const most = leases ? 40 : 3;
  const budgets = fc
    .tuple(
      ...Array.from({ length: KEYS_PER_ORG }, (_, k) => budgetArb('KEY', k, leases)),
      budgetArb('USER', 0, leases),
      budgetArb('USER', 1, leases),
      budgetArb('TEAM', 0, leases),
      budgetArb('ORG', 0, leases),
    )
    .map((all) => all.filter((b): b is BudgetSpec => b !== null));
  return fc.record({
    budgets,
    keyConcurrency: fc.array(fc.option(fc.integer({ min: 1, max: most }), { freq: 3 }), {
      minLength: KEYS_PER_ORG,
      maxLength: KEYS_PER_ORG,
    }),
    callsPerWindow: fc.option(fc.integer({ min: 1, max: leases ? 60 : 6 }), { freq: 3 }),
    prices: priceBookArb(),
  });
}

export function worldArb(leases: boolean): fc.Arbitrary<WorldSpec> {
  return fc.record({ orgs: fc.array(orgArb(leases), { minLength: 2, maxLength: 3 }), tools: toolsArb });
}

const amountArb: fc.Arbitrary<Amount> = fc.oneof(
  { arbitrary: fc.constantFrom(0n, 1n, LARGEST_MICROS).map((fixed) => ({ fixed })), weight: 3 },
  { arbitrary: fc.bigInt(2n, 5_000n).map((fixed) => ({ fixed })), weight: 5 },
  { arbitrary: fc.constantFrom(-1n, 0n, 1n).map((nearLimit) => ({ nearLimit })), weight: 2 },
);

const actualArb: fc.Arbitrary<Actual> = fc.oneof(
  fc.constantFrom<Actual>('zero', 'all'),
  fc.integer({ min: 0, max: 1000 }).map((part) => ({ part })),
);

/** A priced call's result: failed or not; output from none to half again the cap; a reported cost (some negative). */
const outcomeArb = fc.record({
  failed: fc.constantFrom(false, false, false, true),
  tokensPerMille: fc.oneof(fc.constantFrom(0, 1000), fc.integer({ min: 0, max: 1500 })),
  reported: fc.option(fc.oneof(fc.constantFrom(0n, -5n), fc.bigInt(1n, 6_000n)), { freq: 2 }),
});

/**
 * The commands of a run (time virtual in both modes); with leases a call dies only with its edge.
 * `restarts`: Redis is a server of the run's own, restarted from its append-only file at times.
 */
export function commandsArb(leases: boolean, maxCommands: number, restarts = false): fc.Arbitrary<Iterable<Cmd>> {
  const org = fc.integer({ min: 0, max: 2 });
  const key = fc.integer({ min: 0, max: KEYS_PER_ORG - 1 });
  const pick = fc.nat(1000);
  const admit = fc.tuple(org, key, amountArb).map(([o, k, a]) => new AdmitCommand(o, k, a));
  const priced = fc.tuple(org, key, fc.nat(1)).map(([o, k, t]) => new PricedAdmitCommand(o, k, t));
  const complete = fc.tuple(pick, actualArb, outcomeArb).map(([p, how, out]) => new CompleteCommand([p], how, out));
  const common: fc.Arbitrary<Cmd>[] = [
    ...Array.from({ length: 3 }, () => admit),
    ...Array.from({ length: 3 }, () => priced),
    complete,
    complete,
    fc.tuple(pick, pick, actualArb, outcomeArb).map(([p, q, how, out]) => new CompleteCommand([p, q], how, out)),
    pick.map((p) => new CancelCommand(p)),
    org.map((o) => new ReconcileCommand(o)),
    fc.tuple(org, fc.nat(4)).map(([o, kind]) => new PlantMalformedCommand(o, kind)),
    fc.tuple(org, fc.nat(7)).map(([o, b]) => new CorruptCounterCommand(o, b)),
    fc.constantFrom(1_000, 30_000, MODEL_RESERVATION_TTL_MS + 1).map((ms) => new AdvanceCommand(ms)),
    // A loss is rare; the rebuild (only once lost) comes soon after.
    fc.oneof(
      { arbitrary: fc.constant<Cmd>(new LoseRedisCommand()), weight: 1 },
      { arbitrary: fc.constant<Cmd>(new RebuildCommand()), weight: 3 },
    ),
  ];
  // Under leases a call dies only with its edge (which renews the leases its calls hold).
  const byMode: fc.Arbitrary<Cmd>[] = leases
    ? [
        // Each drops every lease: rarer than admissions, so leases get granted and used between them.
        fc.oneof(
          { arbitrary: fc.constant<Cmd>(new ReturnLeasesCommand()), weight: 1 },
          { arbitrary: admit, weight: 3 },
        ),
        fc.oneof({ arbitrary: fc.constant<Cmd>(new CrashEdgeCommand()), weight: 1 }, { arbitrary: admit, weight: 3 }),
        admit,
        priced,
      ]
    : [
        pick.map((p) => new CrashCommand(p)),
        fc.tuple(org, key, amountArb).map(([o, k, a]) => new StallCommand(o, k, a)),
      ];
  // About one restart a sequence: each takes a new redis-server reading its append-only file.
  const restart = restarts
    ? [fc.oneof({ arbitrary: fc.constant<Cmd>(new RestartRedisCommand()), weight: 1 }, { arbitrary: admit, weight: 6 })]
    : [];
  return fc.commands([...common, ...byMode, ...restart], { maxCommands, size: 'max' });
}

/** The virtual clock's start: today 01:00 UTC, so a run's few hours stay inside every period of today. */
export function virtualStart(): number {
  const d = new Date();
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate(), 1);
}

export interface MoneyModelRun {
  sys: MoneySystem;
  numRuns: number;
  maxCommands: number;
  seed?: number;
  /** Stop at the first discrepancy without shrinking it (the bench). */
  endOnFailure?: boolean;
  /**
   * No sequence (nor shrinking step) starts after this many ms: a run ends in about this time
   * whatever the machine's load, with fewer sequences (and a failure with the shrinking done so far).
   */
  timeLimitMs?: number;
}

/**
 * The suite's seed (test/money-model): its sequences pass on standalone Redis, a Redis Cluster and
 * Sentinel, one by one and under leases, on every run. A discrepancy found by an exploring run
 * (bench:money-model, MONEY_MODEL_SEED=random) is fixed, and replayed by its own seed, not by this one.
 */
export const SUITE_MONEY_MODEL_SEED = 20261126;

/** The property: on any world and any command sequence, the real money path matches the model after every step. */
export function moneyModelProperty(run: MoneyModelRun, counter: RunCounts) {
  const { sys } = run;
  return fc.asyncProperty(
    worldArb(sys.leases),
    commandsArb(sys.leases, run.maxCommands, sys.canRestartRedis),
    async (spec, cmds) => {
      const start = virtualStart();
      sys.startSequence(start);
      const t0 = performance.now();
      await sys.ensureEpoch(); // a previous sequence may have ended with Redis' data lost
      const world = await sys.createWorld(spec, start);
      counter.msByCommand.createWorld = Math.round((counter.msByCommand.createWorld ?? 0) + performance.now() - t0);
      const model = new MoneyModel(spec, start);
      const real: Real = { sys, world, counter };
      counter.sequences++;
      try {
        await fc.asyncModelRun(() => ({ model, real }), wrapEach(cmds, counter));
      } finally {
        // What the sequence left behind does not leak into the next one (another world, new ids).
        if (sys.leases) await sys.returnLeases();
        if (!model.epochLost) await sys.drain(world).catch(() => undefined);
      }
    },
  );
}

/** Every command followed by the comparison, and counted. */
function wrapEach(cmds: Iterable<Cmd>, counter: RunCounts): Iterable<Cmd> {
  return {
    [Symbol.iterator]: function* () {
      for (const c of cmds) {
        yield {
          check: (m) => c.check(m),
          run: async (m, r) => {
            const t0 = performance.now();
            await c.run(m, r);
            await verify(m, r);
            counter.steps++;
            const kind = c.toString().replace(/\(.*$/, '');
            tally(counter, kind);
            counter.msByCommand[kind] = Math.round((counter.msByCommand[kind] ?? 0) + performance.now() - t0);
          },
          toString: () => c.toString(),
        };
      }
    },
  };
}

/** Runs the property; resolves with what ran, or rejects with fast-check's report (seed, path, shrunk commands). */
export async function runMoneyModel(run: MoneyModelRun): Promise<RunCounts> {
  const counter: RunCounts = { steps: 0, sequences: 0, byCommand: {}, msByCommand: {} };
  await fc.assert(moneyModelProperty(run, counter), {
    numRuns: run.numRuns,
    seed: run.seed,
    endOnFailure: run.endOnFailure,
    // Skipped, not interrupted: a sequence in progress is never abandoned mid-way (it shares the system).
    skipAllAfterTimeLimit: run.timeLimitMs,
  });
  return counter;
}
