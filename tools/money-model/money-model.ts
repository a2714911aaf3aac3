// The plain reference model of the money path (admission, completion, sweep, reconcile, Redis
// data loss and rebuild), in bigint micro-units, with no Redis and no cleverness: what an
// operator would expect of budgets and rate limits, written down. The model-based test and
// `bench:money-model` run random sequences of commands against it and against the real services
// on real Redis (standalone and Cluster) and compare after every step (see money-system.ts).

/** The largest amount Tollgate handles: every amount stays below 2^53 (see microsToJson). */
export const LARGEST_MICROS = 2n ** 53n - 1n;

/**
 * More than the priced calls of one sequence can reserve in all (price rules of at most 5,000
 * per call, 20 per output token up to a cap of 50 tokens and a reported-cost cap of 5,000).
 */
export const PRICED_HEADROOM_MICROS = 10_000_000n;

/** How long a reservation lives without its edge (virtual ms); the sweep frees it after that. */
export const MODEL_RESERVATION_TTL_MS = 120_000;

/** A live edge renews its holds this often (HoldRenewal: every TTL/3, from when its clock starts). */
export const MODEL_RENEWAL_MS = Math.floor(MODEL_RESERVATION_TTL_MS / 3);

/** The rate-limit window of the organisation-wide calls-per-window rule (ms). */
export const MODEL_WINDOW_MS = 60_000;

export type Scope = 'KEY' | 'USER' | 'TEAM' | 'ORG';
export type Period = 'DAY' | 'WEEK' | 'MONTH' | 'QUARTER' | 'TOTAL';

/** Budgets are checked most specific first; a refusal names the first hard budget short. */
export const SCOPE_ORDER: Scope[] = ['KEY', 'USER', 'TEAM', 'ORG'];

/** Every organisation has one team, two users and three keys: keys 0 and 1 are user 0's, key 2 user 1's. */
export const KEYS_PER_ORG = 3;
export const USER_OF_KEY = [0, 0, 1];

export interface BudgetSpec {
  scope: Scope;
  /** The key (KEY) or user (USER) index; 0 for TEAM and ORG. */
  who: number;
  period: Period;
  limit: bigint;
  hard: boolean;
}

export interface OrgSpec {
  /** At most one budget per scope and holder, so the level a refusal names is well defined. */
  budgets: BudgetSpec[];
  /** Per key: its concurrency limit, or null. */
  keyConcurrency: (number | null)[];
  /** The organisation's calls per MODEL_WINDOW_MS, or null. */
  callsPerWindow: number | null;
  /** The organisation's price book (empty: every call is free). */
  prices: PriceSpec[];
}

export interface WorldSpec {
  orgs: OrgSpec[];
  /** The tools agents call, the same in every organisation. */
  tools: ToolSpec[];
}

/** A tool as the edge prices it: its output-token cap and the 99th percentile of its output seen so far. */
export interface ToolSpec {
  name: string;
  cap: number;
  /** null: no history, so a call reserves for the whole cap. */
  p99: number | null;
}

/**
 * A price rule as an admin adds it (org-wide): from `from` ms after the world's start, until
 * `until` ms after it (or open-ended). Patterns: `*`, a prefix glob (`se*`) or a tool's name.
 */
export interface PriceSpec {
  pattern: string;
  perCall: bigint;
  perToken: bigint;
  /** The cap on a cost the tool reports, when the rule accepts reported costs. */
  reportedCap: bigint | null;
  chargeFailed: boolean;
  from: number;
  until: number | null;
}

/** What a priced call's result was: failed or not, its output tokens, the cost the tool reported. */
export interface CallOutcome {
  failed: boolean;
  tokens: number;
  reported: bigint | null;
}

// The price book, written down plainly: the reference the real pricing lib (libs/pricing) is compared with.

/** Whether a rule's pattern names a tool: `*`, an exact name, or a prefix followed by `*`. */
function patternNames(pattern: string, tool: string): boolean {
  if (pattern === '*' || pattern === tool) return true;
  return pattern.endsWith('*') && tool.startsWith(pattern.slice(0, -1));
}

/**
 * The rule in force for a tool at `at` (ms after the world's start): of the rules in effect
 * naming it, the one with the most specific pattern (an exact name before a prefix before `*`),
 * then the latest start, then the one added last (later in the book). null: the call is free.
 */
export function refPriceOf(book: PriceSpec[], tool: string, at: number): PriceSpec | null {
  const rank = (p: string) => (p === '*' ? 0 : p.endsWith('*') ? 1 : 2);
  let best: PriceSpec | null = null;
  for (const r of book) {
    if (r.from > at || (r.until !== null && r.until <= at) || !patternNames(r.pattern, tool)) continue;
    if (
      !best ||
      rank(r.pattern) > rank(best.pattern) ||
      (rank(r.pattern) === rank(best.pattern) && r.from >= best.from)
    )
      best = r;
  }
  return best;
}

/** What a call reserves for `tokens` output tokens: the per-call price, the tokens, and the reported-cost cap. */
export function refEstimate(rule: PriceSpec | null, tokens: number): bigint {
  if (!rule) return 0n;
  return rule.perCall + rule.perToken * BigInt(tokens) + (rule.reportedCap ?? 0n);
}

/** What a finished call costs with `deliverable` tokens delivered at most. */
export function refCost(rule: PriceSpec | null, outcome: CallOutcome, deliverable: number): bigint {
  if (!rule || (outcome.failed && !rule.chargeFailed)) return 0n;
  let cost = rule.perCall + rule.perToken * BigInt(Math.min(outcome.tokens, deliverable));
  if (rule.reportedCap !== null && outcome.reported !== null) {
    const r = outcome.reported < 0n ? 0n : outcome.reported;
    cost += r < rule.reportedCap ? r : rule.reportedCap;
  }
  return cost;
}

/** What an admission answered, as an agent would tell outcomes apart. */
export type AdmissionAnswer =
  | { kind: 'admitted' }
  | { kind: 'budget'; scope: Scope }
  | { kind: 'rate-limit' }
  | { kind: 'counters-unavailable'; reason: 'data-lost' | 'counter-corrupt' };

interface ModelBudget {
  spec: BudgetSpec;
  /** What the ledger will hold for the period: every settled cost (the counter's `spent` when present). */
  spent: bigint;
  /** Estimates of the calls in flight whose reservation record is still there. */
  reserved: bigint;
  /** The counter exists in Redis (false after a data loss, until the rebuild). */
  present: boolean;
  /**
   * Costs settled without their reservation (swept after the TTL while the call ran, or lost with
   * Redis' data): admissions meanwhile did not count them, so a hard budget may end above its
   * limit by this much and no more (docs/architecture.md, "What a failover loses").
   */
  unreserved: bigint;
  /** A field of its counter is not an integer (a bad restore, a hand edit): admissions on it are refused until reconcile rebuilds it. */
  corrupt: boolean;
}

export interface ModelCall {
  id: string;
  org: number;
  key: number;
  estimate: bigint;
  /** When Redis may sweep its hold: its admission's, then its edge's last renewal, plus the TTL. */
  deadline: number;
  /** Indexes into the organisation's budgets that applied to the call. */
  budgets: number[];
  /** The reservation record is in Redis (not yet settled, swept or lost). */
  record: boolean;
  /** The call holds a concurrency slot of its key (not yet settled, swept or lost). */
  slot: boolean;
  /** It was admitted with a concurrency slot: its edge's renewal names the slot. */
  slotted?: boolean;
  /** Its edge died: it never completes; its reservation is left to the sweep. */
  crashed: boolean;
  /** Its edge's event loop stalled past the TTL: not renewed until the loop runs again (resume). */
  stalled?: boolean;
  /**
   * Its edge's renewal found part of its hold gone (swept while the edge stalled, or lost with
   * Redis' data): the edge renews it no more, and it settles without its reservation.
   */
  lapsed?: boolean;
  /**
   * Admitted against the edge's leases (told by the real edge: which calls it admits locally is
   * its choice): while the edge lives it renews them, so the call's allowance is never swept.
   */
  leased?: boolean;
  /** A call priced from the price book (absent: an estimate given as is, like a page read's). */
  priced?: PricedHold;
}

/** What a priced call was admitted under: its tool, its rule (null: free) and the output tokens its reservation pays for. */
export interface PricedHold {
  tool: ToolSpec;
  rule: PriceSpec | null;
  reservedTokens: number;
}

/** A priced call's completion as the edge makes it: the cost, and the top-up admitted for output beyond the reservation. */
export interface PricedSettlement {
  cost: bigint;
  /** The top-up's id when one was admitted (its part of the cost settles on it). */
  topUp: string | null;
}

/** The output tokens a call of `tool` reserves for: its observed p99 (at most the cap), or the cap without history. */
export function likelyTokens(tool: ToolSpec): number {
  return tool.p99 === null ? tool.cap : Math.min(Math.max(tool.p99, 0), tool.cap);
}

/** The budgets (by index) that apply to a caller, most specific first. */
export function budgetsOfCaller(org: OrgSpec, key: number): number[] {
  const applies = (b: BudgetSpec) =>
    (b.scope === 'KEY' && b.who === key) ||
    (b.scope === 'USER' && b.who === USER_OF_KEY[key]) ||
    b.scope === 'TEAM' ||
    b.scope === 'ORG';
  return org.budgets
    .map((b, i) => ({ b, i }))
    .filter(({ b }) => applies(b))
    .sort((x, y) => SCOPE_ORDER.indexOf(x.b.scope) - SCOPE_ORDER.indexOf(y.b.scope))
    .map(({ i }) => i);
}

export class MoneyModel {
  now: number;
  epochLost = false;
  readonly budgets: ModelBudget[][];
  /** Calls admitted and not yet completed or cancelled (crashed ones stay). */
  readonly open = new Map<string, ModelCall>();
  /** Usage events the edge wrote (ledger plus outbox): call id -> cost, per organisation. */
  readonly events: Map<string, bigint>[];
  /** Per organisation, calls counted per window index. */
  readonly windows: Map<number, number>[];
  /** Malformed records planted per organisation: their deadlines, until a sweep moves them aside. */
  readonly planted: number[][];
  /** Malformed records moved aside per organisation, until reconciliation audits and drops them. */
  readonly quarantined: number[];
  /** The world's start: price rules take effect relative to it. */
  readonly start: number;
  /** The budget that refused the last admission refused for its budget. */
  private refusedBy: ModelBudget | null = null;
  /** The live edge renews its holds at renewalOrigin + k * MODEL_RENEWAL_MS (k >= 1): its clock's start. */
  private renewalOrigin: number;

  constructor(
    readonly spec: WorldSpec,
    now: number,
  ) {
    this.now = now;
    this.start = now;
    this.renewalOrigin = now;
    this.budgets = spec.orgs.map((o) =>
      o.budgets.map((b) => ({ spec: b, spent: 0n, reserved: 0n, present: true, unreserved: 0n, corrupt: false })),
    );
    this.events = spec.orgs.map(() => new Map());
    this.windows = spec.orgs.map(() => new Map());
    this.planted = spec.orgs.map(() => []);
    this.quarantined = spec.orgs.map(() => 0);
  }

  /** Whether a call of this key touches Redis before its upstream at all (a budget or a rate limit applies). */
  touchesRedis(org: number, key: number, budgetsOnly = false): boolean {
    const o = this.spec.orgs[org];
    if (budgetsOfCaller(o, key).length > 0) return true;
    return !budgetsOnly && (o.keyConcurrency[key] !== null || o.callsPerWindow !== null);
  }

  /**
   * Admits (or refuses) a call of `estimate` by `key` of `org` now. `budgetsOnly`: no rate limit
   * applies (a top-up for more output, which calls no upstream). `underLease`: the edge admitted it
   * against allowance its leases hold (which calls it admits locally is its choice; see below).
   *
   * A hard budget admits a call checked in Redis only if `spent + reserved + estimate <= limit`: a
   * budget already above its limit refuses every such call, a free one too. It can be above its
   * limit only by costs settled without their reservation (`unreserved`: a call that outlived its
   * reservation's TTL, or was in flight when Redis lost its data). Such a cost does not take back
   * allowance an edge leased before it: that allowance was counted against the limit when granted,
   * so a call a lease covers is admitted as long as `spent + reserved + estimate <= limit +
   * unreserved`, the bound the budget may end at (checkInvariants). Beyond that bound a lease
   * admitting a call is a discrepancy: it held allowance Redis never counted.
   */
  admit(
    id: string,
    org: number,
    key: number,
    estimate: bigint,
    budgetsOnly = false,
    underLease = false,
  ): AdmissionAnswer {
    const o = this.spec.orgs[org];
    const mine = budgetsOfCaller(o, key);
    const call: ModelCall = {
      id,
      org,
      key,
      estimate,
      deadline: this.now + MODEL_RESERVATION_TTL_MS,
      budgets: mine,
      record: false,
      slot: false,
      crashed: false,
    };
    this.refusedBy = null;
    if (!this.touchesRedis(org, key, budgetsOnly)) {
      this.open.set(id, call);
      return { kind: 'admitted' };
    }
    if (this.epochLost) return { kind: 'counters-unavailable', reason: 'data-lost' };

    // Rate limits first (they refuse before any budget is looked at, and before the sweep).
    const max = budgetsOnly ? null : o.keyConcurrency[key];
    if (max !== null) this.sweepSlots(org, key, max);
    if (max !== null && this.slotsInUse(org, key) >= max) return { kind: 'rate-limit' };
    const windowIndex = Math.floor(this.now / MODEL_WINDOW_MS);
    const windowed = !budgetsOnly && o.callsPerWindow !== null;
    if (windowed) {
      const cur = this.windows[org].get(windowIndex) ?? 0;
      const prev = this.windows[org].get(windowIndex - 1) ?? 0;
      const elapsed = this.now - windowIndex * MODEL_WINDOW_MS;
      // The sliding estimate: the previous window weighs what is left of it, this one fully.
      if (prev * (MODEL_WINDOW_MS - elapsed) + (cur + 1) * MODEL_WINDOW_MS > o.callsPerWindow! * MODEL_WINDOW_MS)
        return { kind: 'rate-limit' };
    }

    if (mine.length > 0) {
      this.sweep(org);
      for (const i of mine) {
        const b = this.budgets[org][i];
        // Checked budget by budget, most specific first: the first corrupt or short one answers.
        if (b.corrupt) return { kind: 'counters-unavailable', reason: 'counter-corrupt' };
        const limit = underLease ? b.spec.limit + b.unreserved : b.spec.limit;
        if (b.spec.hard && b.spent + b.reserved + estimate > limit) {
          this.refusedBy = b;
          return { kind: 'budget', scope: b.spec.scope };
        }
      }
      for (const i of mine) this.budgets[org][i].reserved += estimate;
      call.record = true;
    }
    if (windowed) this.windows[org].set(windowIndex, (this.windows[org].get(windowIndex) ?? 0) + 1);
    call.slot = max !== null;
    call.slotted = call.slot;
    this.open.set(id, call);
    return { kind: 'admitted' };
  }

  /**
   * A call of a tool priced by the organisation's price book, admitted as the edge does: its rule
   * in force now, a reservation for the tool's likely output (its p99, or the cap without history);
   * refused by a hard budget, fitted to the output tokens that budget has left for, and asked again.
   */
  admitPriced(id: string, org: number, key: number, tool: ToolSpec, underLease = false): AdmissionAnswer {
    const rule = refPriceOf(this.spec.orgs[org].prices, tool.name, this.now - this.start);
    let tokens = likelyTokens(tool);
    let answer = this.admit(id, org, key, refEstimate(rule, tokens), false, underLease);
    const short = this.refusedBy;
    if (answer.kind === 'budget' && short && rule && rule.perToken > 0n) {
      const available = short.spec.limit - short.spent - short.reserved;
      const left = (available > 0n ? available : 0n) - refEstimate(rule, 0);
      const fits = left < 0n ? 0n : left / rule.perToken;
      if (fits >= 1n && fits < BigInt(tokens)) {
        tokens = Number(fits);
        answer = this.admit(id, org, key, refEstimate(rule, tokens), false, underLease);
      }
    }
    const call = this.open.get(id);
    if (answer.kind === 'admitted' && call) call.priced = { tool, rule, reservedTokens: tokens };
    return answer;
  }

  /**
   * What completing a priced call with `outcome` costs, as the edge decides it: output beyond what
   * the reservation paid for (up to the cap) is admitted as a top-up against the budgets (`topUpId`);
   * refused, the answer may deliver only the reserved tokens. A result longer than it may deliver
   * is not delivered at all: a failed call. Admits the top-up; settles nothing (see completePriced).
   */
  pricePriced(id: string, outcome: CallOutcome, topUpId: string, topUpUnderLease = false): PricedSettlement {
    const call = this.open.get(id)!;
    const { tool, rule, reservedTokens } = call.priced!;
    let deliverable = tool.cap;
    let topUp: string | null = null;
    const more = Math.min(outcome.tokens, tool.cap) - reservedTokens;
    if (rule && more > 0 && rule.perToken > 0n) {
      const answer = this.admit(topUpId, call.org, call.key, rule.perToken * BigInt(more), true, topUpUnderLease);
      topUp = answer.kind === 'admitted' ? topUpId : null;
      deliverable = topUp ? reservedTokens + more : reservedTokens;
    }
    const cost =
      outcome.tokens > deliverable
        ? refCost(rule, { failed: true, tokens: 0, reported: null }, tool.cap)
        : refCost(rule, outcome, deliverable);
    return { cost, topUp };
  }

  /** Settles a priced call at its cost (the part beyond its estimate on its top-up), with its usage event. */
  completePriced(id: string, s: PricedSettlement): void {
    const estimate = this.open.get(id)!.estimate;
    const own = s.topUp && s.cost > estimate ? estimate : s.cost;
    this.complete(id, own, s.cost);
    if (s.topUp) this.complete(s.topUp, s.cost - own, null);
  }

  /** A call completed at `actual` with a usage event of `eventCost`, or was cancelled (0, no event: null). */
  complete(id: string, actual: bigint, eventCost: bigint | null): void {
    const call = this.open.get(id);
    if (!call) throw new Error(`model: no open call ${id}`);
    if (actual > call.estimate) throw new Error('model: a call never settles above its estimate');
    this.open.delete(id);
    for (const i of call.budgets) {
      const b = this.budgets[call.org][i];
      // A settled cost is charged even when the reservation was swept or lost: the ledger will hold it.
      b.spent += actual;
      if (call.record && b.present) b.reserved -= call.estimate;
      else b.unreserved += actual;
    }
    call.record = false;
    call.slot = false;
    if (eventCost !== null) this.events[call.org].set(id, eventCost);
  }

  crash(id: string): void {
    this.open.get(id)!.crashed = true;
  }

  /**
   * Time passes; the live edge renews the holds of its calls at each of its renewal times on the
   * way (a renewal only moves a deadline later).
   */
  advance(ms: number): void {
    const from = this.now;
    this.now += ms;
    const last = this.lastRenewal();
    if (last <= from) return;
    for (const c of this.open.values()) if (this.renewed(c)) this.renew(c, last);
  }

  /** The edge died and a new one took over now: its renewals run from now. */
  edgeRestarted(): void {
    this.renewalOrigin = this.now;
  }

  /**
   * The live edge's event loop stalls for `ms` (more than the TTL): none of its renewals runs
   * meanwhile, so every hold it renews is past its deadline by the end, left to the sweep.
   */
  stall(ms: number): void {
    for (const c of this.open.values()) if (this.renewed(c)) c.stalled = true;
    this.now += ms;
  }

  /**
   * The stalled loop runs again: its late renewal moves each stalled call's whole hold to now +
   * TTL, or finds a part of it gone (the sweep took it meanwhile, or Redis lost it) and renews that
   * call no more (EXTEND_HOLD answers it gone, whatever the hold's shape).
   */
  resume(): void {
    for (const c of this.open.values()) {
      if (!c.stalled) continue;
      c.stalled = false;
      this.renew(c, this.now);
    }
  }

  /**
   * The edge's renewal of a call at `t`: its whole hold held until t + TTL, or, with a part of it
   * gone from Redis (swept, lost), lapsed. A leased call's share is its lease's, renewed with it.
   */
  private renew(c: ModelCall, t: number): void {
    if (!c.leased && ((c.budgets.length > 0 && !c.record) || (c.slotted === true && !c.slot))) c.lapsed = true;
    else c.deadline = Math.max(c.deadline, t + MODEL_RESERVATION_TTL_MS);
  }

  /** The live edge's last renewal time up to now (its clock's start before the first). */
  private lastRenewal(): number {
    return this.renewalOrigin + Math.floor((this.now - this.renewalOrigin) / MODEL_RENEWAL_MS) * MODEL_RENEWAL_MS;
  }

  /** A malformed record planted in an organisation's reservations, due now. */
  plant(org: number): void {
    this.planted[org].push(this.now);
  }

  /**
   * Reconciliation audited and dropped the quarantined records (`malformed`) and rebuilt the
   * corrupt counters from the ledger (`rebuilt`); it finds nothing else to repair.
   */
  reconciled(org: number): { malformed: number; rebuilt: number } {
    const malformed = this.quarantined[org];
    this.quarantined[org] = 0;
    const corrupt = this.budgets[org].filter((b) => b.corrupt);
    for (const b of corrupt) b.corrupt = false;
    return { malformed, rebuilt: corrupt.length };
  }

  /**
   * Reconciliation under leases: the sweep that moves a malformed record aside runs with the
   * organisation's next script that reaches its budgets, which calls admitted under leases do not
   * run, so the model cannot say when. What it holds to is that every planted record is in one
   * place: `unswept` of them still among the reservations (the real system's count), the rest moved
   * aside and now audited and dropped (`malformed`), none lost, none counted twice.
   */
  reconciledUnderLeases(org: number, unswept: number): { malformed: number; rebuilt: number } {
    const total = this.planted[org].length + this.quarantined[org];
    this.planted[org] = Array.from({ length: Math.min(unswept, total) }, () => this.now);
    this.quarantined[org] = 0;
    const corrupt = this.budgets[org].filter((b) => b.corrupt);
    for (const b of corrupt) b.corrupt = false;
    return { malformed: total - unswept, rebuilt: corrupt.length };
  }

  /**
   * Whether budget i's counter can be corrupted with nothing in flight on it: present, and no call
   * in flight (crashed or swept ones too) counts against it (a settlement naming a corrupt counter
   * refuses the organisation's whole completion script, and a sweep moves its record aside, which
   * this model does not follow).
   */
  canCorrupt(org: number, i: number): boolean {
    const b = this.budgets[org]?.[i];
    if (!b || !b.present || b.corrupt || this.epochLost) return false;
    for (const c of this.open.values()) if (c.org === org && c.budgets.includes(i)) return false;
    return true;
  }

  corrupt(org: number, i: number): void {
    this.budgets[org][i].corrupt = true;
  }

  /** Redis lost every key (after the worker had written the outbox to the ledger). */
  loseRedis(): void {
    this.epochLost = true;
    for (const org of this.budgets)
      for (const b of org) {
        b.present = false;
        b.reserved = 0n;
        b.corrupt = false;
      }
    for (const c of this.open.values()) {
      c.record = false;
      c.slot = false;
    }
    for (const w of this.windows) w.clear();
    for (const p of this.planted) p.length = 0;
    this.quarantined.fill(0);
  }

  /** The worker rebuilt every counter from the ledger and set a new epoch. */
  rebuild(): void {
    this.epochLost = false;
    for (const org of this.budgets) for (const b of org) b.present = true;
  }

  /** The counter a budget should have in Redis now: null when it is missing. */
  counter(org: number, i: number): { spent: bigint; reserved: bigint } | 'corrupt' | null {
    const b = this.budgets[org][i];
    if (b.corrupt) return 'corrupt';
    return b.present ? { spent: b.spent, reserved: b.reserved } : null;
  }

  /** Calls a key has in flight on its concurrency limit (a slot whose deadline passed no longer counts). */
  private slotsInUse(org: number, key: number): number {
    let n = 0;
    for (const c of this.open.values())
      if (c.org === org && c.key === key && c.slot && (c.deadline > this.now || this.renewed(c))) n++;
    return n;
  }

  /**
   * A call whose edge lives renews what it holds (its lease, or its reservation and slot in Redis):
   * it stays past its deadline. Only a crashed call's hold is swept, a stalled edge's (until its
   * loop runs again) and a lapsed one's.
   */
  private renewed(c: ModelCall): boolean {
    return !c.crashed && !c.stalled && !c.lapsed;
  }

  /**
   * An admission on a key's concurrency limit drops the slots past their deadline from its set,
   * only when the set holds as many as the limit (rl_check): a slot can be gone before the limit
   * is reached only by its settlement.
   */
  private sweepSlots(org: number, key: number, max: number): void {
    const held = [...this.open.values()].filter((c) => c.org === org && c.key === key && c.slot);
    if (held.length < max) return;
    for (const c of held) if (c.deadline <= this.now && !this.renewed(c)) c.slot = false;
  }

  /** What the next admission of an organisation that reaches its budgets frees: every record past its deadline. */
  private sweep(org: number): void {
    for (const c of this.open.values()) {
      if (c.org !== org || !c.record || c.deadline > this.now || this.renewed(c)) continue;
      c.record = false;
      for (const i of c.budgets) {
        const b = this.budgets[org][i];
        if (b.present) b.reserved -= c.estimate;
      }
    }
    const due = this.planted[org].filter((d) => d <= this.now);
    this.planted[org] = this.planted[org].filter((d) => d > this.now);
    this.quarantined[org] += due.length;
  }

  /**
   * The largest estimate a call of this key may have: a counter's fields stay at most 2^53 - 1
   * (the range Lua's doubles hold exactly, which the scripts and reconciliation compute in).
   */
  largestEstimate(org: number, key: number): bigint {
    // An organisation with a price book keeps room for what its priced calls may reserve.
    let room = LARGEST_MICROS - (this.spec.orgs[org].prices.length > 0 ? PRICED_HEADROOM_MICROS : 0n);
    for (const i of budgetsOfCaller(this.spec.orgs[org], key)) {
      const b = this.budgets[org][i];
      const left = LARGEST_MICROS - b.spent - b.reserved;
      if (left < room) room = left;
    }
    return room > 0n ? room : 0n;
  }

  /**
   * Invariants of the model itself: a hard budget never ends above its limit (but for costs
   * settled without their reservation), nothing goes negative.
   */
  checkInvariants(): void {
    this.budgets.forEach((org, o) =>
      org.forEach((b, i) => {
        if (b.spec.hard && b.spent > b.spec.limit + b.unreserved)
          throw new Error(
            `model: hard budget ${o}/${i} spent ${b.spent} above its limit ${b.spec.limit} (+${b.unreserved} settled unreserved)`,
          );
        if (b.reserved < 0n) throw new Error(`model: budget ${o}/${i} reserved ${b.reserved} < 0`);
      }),
    );
  }
}
