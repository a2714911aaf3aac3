import { Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { PrismaService, ledgerSpend } from '@tollgate/db';
import { Micros, PeriodKind, PeriodWindow, TenantLevel, appliesToCaller, periodWindow } from '@tollgate/kernel';
import { luaAmount, OrgConfigCache, RedisService, ScriptCall } from '@tollgate/redis';
import { BudgetException, BudgetExceptionCode } from './budget.exception';
import { BudgetCheckAnswer, CorruptCounterFields, DROP_CORRUPT_COUNTER, SEED_COUNTER } from './budget-scripts';

export type BudgetScope = TenantLevel;

export interface BudgetRule {
  id: string;
  scope: BudgetScope;
  scopeId: string;
  period: PeriodKind;
  limitMicros: Micros;
  mode: 'HARD' | 'SOFT';
}

/** Who spends: the four levels a call is checked against. */
export interface SpendScopes {
  orgId: string;
  teamId: string;
  userId: string;
  keyId: string;
  timeZone: string;
}

/** One budget's position for the current period, as shown to agents and admins. */
export interface BudgetStanding {
  budgetId: string;
  scope: BudgetScope;
  scopeId: string;
  period: PeriodKind;
  mode: 'HARD' | 'SOFT';
  limitMicros: Micros;
  spentMicros: Micros;
  /** Held by calls in flight that were admitted one by one. */
  reservedMicros: Micros;
  /** Held by edges as leases: allowance for calls they admit without a round trip; what a lease does not use goes back. */
  leasedMicros: Micros;
  /** limit - spent - reserved: leased allowance counts as available (it is for calls yet to come, and comes back unused). */
  remainingMicros: Micros;
  periodStart: Date;
  resetsAt: Date | null;
}

/** What a budget can still admit: its limit less spent, reserved and leased (0 when none is left). */
export function availableMicros(b: BudgetStanding): Micros {
  const available = b.limitMicros - b.spentMicros - b.reservedMicros - b.leasedMicros;
  return available > 0n ? available : 0n;
}

/** A budget's Redis counter next to the ledger, for reconciliation; `standing` uses the counter if present. */
export interface BudgetCounterCheck {
  standing: BudgetStanding;
  counterSpentMicros: Micros | null;
  ledgerSpentMicros: Micros;
  /** The counter was missing (or corrupt) and has been seeded from the ledger. */
  rebuilt: boolean;
  /** The counter held a field that is not an integer: the fields found (it is rebuilt with `rebuildMissing`). */
  corrupt?: CorruptCounterFields;
}

/** A budget bound to its current period and Redis counter. */
export interface BoundBudget {
  readonly rule: BudgetRule;
  readonly periodStart: Date;
  readonly resetsAt: Date | null;
  readonly hashKey: string;
}

/** A reservation held while the upstream works; settle or release it exactly once. */
export interface SpendReservation {
  id: string;
  orgId: string;
  amountMicros: Micros;
  budgets: BoundBudget[];
}

/** A reservation ready to run: see BudgetService.planReservation. */
export interface ReservationPlan {
  scopes: SpendScopes;
  reservation: SpendReservation;
  now: Date;
  deadline: number;
}

export type ReserveOutcome =
  | { ok: true; reservation: SpendReservation; standings: BudgetStanding[] }
  | { ok: false; exceeded: BudgetStanding; requestedMicros: Micros }
  /** A counter holds a field that is not an integer: nothing is admitted on it until reconciliation rebuilds it. */
  | { ok: false; corruptCounter: { budgetId: string; counterKey: string } };

// Counters outlive their period by a week so late settlements and reports still find them.
const COUNTER_GRACE_SECONDS = 7 * 24 * 3600;
/** Edges publish an organisation's id here when they find one of its budget counters corrupt; the worker rebuilds it. */
export const COUNTER_CORRUPT_CHANNEL = 'budget-counter-corrupt';
const SCOPE_ORDER: BudgetScope[] = ['KEY', 'USER', 'TEAM', 'ORG'];
/** Organisations whose record keys an edge keeps at most (then it starts again). */
const MAX_KEPT_ORGS = 10_000;

/**
 * The key, user, team and organisation budgets of a call, bound to their current periods and Redis
 * counters: the plans and Lua (BUDGET_LUA) that @tollgate/admission runs to reserve and settle, the
 * seeding of a missing counter from the ledger, and standings for reports and alerts.
 */
@Injectable()
export class BudgetService implements OnModuleInit {
  private readonly logger = new Logger(BudgetService.name);
  private readonly cache: OrgConfigCache<BudgetRule[]>;
  private readonly windows = new Map<string, PeriodWindow>();
  /** Each cached rule bound to its latest period (a rule reloaded is a new object: it is bound again). */
  private readonly bound = new WeakMap<BudgetRule, BoundBudget & { window: PeriodWindow }>();
  /** Each organisation's reservation records and deadlines keys (recordKeys), made once. */
  private readonly records = new Map<string, [string, string]>();

  constructor(
    private readonly prisma: PrismaService,
    private readonly redis: RedisService,
  ) {
    // Kept most specific first, so a call's budgets come out of the cache in order.
    this.cache = new OrgConfigCache(async (orgId) =>
      (await this.prisma.budget.findMany({ where: { orgId } })).sort(
        (a, b) => SCOPE_ORDER.indexOf(a.scope) - SCOPE_ORDER.indexOf(b.scope),
      ),
    );
  }

  async onModuleInit(): Promise<void> {
    await this.cache.attach(this.redis);
  }

  /** The budgets that apply to a caller, most specific first. */
  async budgetsFor(scopes: SpendScopes): Promise<BudgetRule[]> {
    return budgetsApplying(await this.cache.get(scopes.orgId), scopes);
  }

  /** The calendar period containing `now`, remembered until it ends (luxon is costly on the hot path). */
  private currentWindow(period: PeriodKind, timeZone: string, now: Date): PeriodWindow {
    const key = `${period}|${timeZone}`;
    const hit = this.windows.get(key);
    if (hit && hit.start <= now && (hit.end === null || now < hit.end)) return hit;
    const window = periodWindow(period, now, timeZone);
    this.windows.set(key, window);
    return window;
  }

  /** The rule bound to the period containing `now`: made once per rule and period, not once per call. */
  private bind(rule: BudgetRule, scopes: SpendScopes, now: Date): BoundBudget {
    const window = this.currentWindow(rule.period, scopes.timeZone, now);
    const kept = this.bound.get(rule);
    if (kept && kept.window === window) return kept;
    const hashKey = this.redis.orgKey(scopes.orgId, 'budget', rule.id, String(window.start.getTime()));
    const b = { rule, periodStart: window.start, resetsAt: window.end, hashKey, window };
    this.bound.set(rule, b);
    return b;
  }

  /** The organisation's reservation records and their deadlines (R and Z of BUDGET_LUA). */
  recordKeys(orgId: string): [string, string] {
    let keys = this.records.get(orgId);
    if (!keys) {
      keys = [this.redis.orgKey(orgId, 'budget-resv'), this.redis.orgKey(orgId, 'budget-resv', 'deadlines')];
      if (this.records.size >= MAX_KEPT_ORGS) this.records.clear();
      this.records.set(orgId, keys);
    }
    return keys;
  }

  /** The scripts' keys for a call: the organisation's reservations (records, deadlines), then each budget's counter. */
  private scriptKeys(orgId: string, budgets: BoundBudget[]): string[] {
    return [...this.recordKeys(orgId), ...budgets.map((b) => b.hashKey)];
  }

  /**
   * What reserving `amount` at every level takes: the reservation to hold (its budgets, what this
   * edge's leases admit against). The keys and arguments of BUDGET_LUA's budget_check/budget_apply
   * are made only for a call checked in Redis (scriptCall), for a script that runs it
   * (@tollgate/admission runs it with the rate limits). A reservation whose edge died is swept at
   * `deadline` (ms). Without a promise when the organisation's budgets are cached (nearly every
   * call: each promise waited for is a turn of the microtask queue).
   */
  planReservation(
    scopes: SpendScopes,
    reservationId: string,
    amount: Micros,
    now: Date,
    deadline: number,
  ): ReservationPlan | Promise<ReservationPlan> {
    const cached = this.cache.peek(scopes.orgId);
    if (cached) return this.planWith(budgetsApplying(cached, scopes), scopes, reservationId, amount, now, deadline);
    return this.budgetsFor(scopes).then((rules) => this.planWith(rules, scopes, reservationId, amount, now, deadline));
  }

  private planWith(
    rules: BudgetRule[],
    scopes: SpendScopes,
    reservationId: string,
    amount: Micros,
    now: Date,
    deadline: number,
  ): ReservationPlan {
    const budgets = rules.map((rule) => this.bind(rule, scopes, now));
    const reservation: SpendReservation = { id: reservationId, orgId: scopes.orgId, amountMicros: amount, budgets };
    return { scopes, reservation, now, deadline };
  }

  /** The keys and arguments of budget_check/budget_apply for a planned reservation; null when no budget applies. */
  scriptCall(plan: ReservationPlan): ScriptCall | null {
    const { id, orgId, amountMicros, budgets } = plan.reservation;
    if (budgets.length === 0) return null;
    const args: (string | number)[] = [plan.now.getTime(), id, plan.deadline, luaAmount(amountMicros)];
    for (const b of budgets) args.push(luaAmount(b.rule.limitMicros), b.rule.mode === 'HARD' ? '1' : '0');
    return { keys: this.scriptKeys(orgId, budgets), args };
  }

  /**
   * Runs a reservation through `run`, a script holding BUDGET_LUA's budget_check and budget_apply
   * that answers with their result (decoded by decodeBudgetCheck), or stops with an answer of its
   * own (the edge's script answers a rate-limit refusal that way). A missing counter is seeded from
   * the ledger and the script run again; each counter is seeded at most once per call.
   */
  async reserveThrough<S>(
    plan: ReservationPlan,
    run: () => Promise<BudgetCheckAnswer | { stop: S }>,
  ): Promise<ReserveOutcome | S> {
    for (let attempt = 0; attempt <= plan.reservation.budgets.length; attempt++) {
      const res = await run();
      if ('stop' in res) return res.stop;
      const outcome = await this.reservationOutcome(plan, res);
      if (outcome !== 'retry') return outcome;
    }
    throw new BudgetException(BudgetExceptionCode.CounterUnavailable, 'budget counters could not be initialised');
  }

  /** Reads budget_apply's or budget_check's answer; `retry` once a missing counter has been seeded. */
  private async reservationOutcome(plan: ReservationPlan, res: BudgetCheckAnswer): Promise<ReserveOutcome | 'retry'> {
    const { budgets } = plan.reservation;
    switch (res.kind) {
      case 'no-counter':
        await this.seedCounter(budgets[res.index], plan.scopes, plan.now);
        return 'retry';
      case 'corrupt-counter':
        return {
          ok: false,
          corruptCounter: { budgetId: budgets[res.index].rule.id, counterKey: budgets[res.index].hashKey },
        };
      case 'short': {
        const { spent, reserved, leased } = res.counter;
        return {
          ok: false,
          exceeded: budgetStanding(budgets[res.index], spent, reserved, leased),
          requestedMicros: plan.reservation.amountMicros,
        };
      }
      case 'reserved':
        return {
          ok: true,
          reservation: plan.reservation,
          standings: budgets.map((b, i) =>
            budgetStanding(b, res.counters[i].spent, res.counters[i].reserved, res.counters[i].leased),
          ),
        };
    }
  }

  /** The keys of BUDGET_LUA's budget_settle for a reservation (empty when it holds no budget). */
  settlementKeys(reservation: SpendReservation): string[] {
    return reservation.budgets.length === 0 ? [] : this.scriptKeys(reservation.orgId, reservation.budgets);
  }

  /** Current standings of the budgets that apply to a caller, without reserving. */
  async standingsFor(scopes: SpendScopes, now = new Date()): Promise<BudgetStanding[]> {
    return this.readStandings(await this.budgetsFor(scopes), scopes, now);
  }

  /**
   * Current standings of every budget of an organisation, from the counters (the ledger is read
   * only where a counter is missing): what a budget-alert check needs, without a ledger sum per budget.
   */
  async orgStandings(orgId: string, timeZone: string, now = new Date()): Promise<BudgetStanding[]> {
    return this.readStandings(await this.cache.get(orgId), orgWide(orgId, timeZone), now);
  }

  private async readStandings(rules: BudgetRule[], scopes: SpendScopes, now: Date): Promise<BudgetStanding[]> {
    const out: BudgetStanding[] = [];
    for (const rule of rules) {
      const b = this.bind(rule, scopes, now);
      const [spent, reserved, leased] = await this.redis.client.hmget(b.hashKey, 'spent', 'reserved', 'leased');
      const spentMicros = spent === null ? await this.spentFromLedger(b, scopes) : BigInt(spent);
      out.push(budgetStanding(b, spentMicros, BigInt(reserved ?? '0'), BigInt(leased ?? '0')));
    }
    return out;
  }

  /**
   * Every budget of an organisation for its current period: the Redis counter (null when missing)
   * beside the ledger's sum. With `rebuildMissing`, a missing counter is seeded from the ledger,
   * as the next reservation would, and so is a corrupt one (a field that is not an integer, which
   * refuses every admission on it), once dropped. A corrupt counter reads as missing otherwise.
   * Used by reconciliation and utilisation reports.
   */
  async checkCounters(
    orgId: string,
    timeZone: string,
    opts: { rebuildMissing?: boolean; now?: Date } = {},
  ): Promise<BudgetCounterCheck[]> {
    const scopes = orgWide(orgId, timeZone);
    const now = opts.now ?? new Date();
    // Each budget is one ledger sum: run them together, not one after another (utilisation
    // of an org with many budgets waited for the sum of them).
    return Promise.all(
      (await this.cache.get(orgId)).map(async (rule): Promise<BudgetCounterCheck> => {
        const b = this.bind(rule, scopes, now);
        const [fields, ledgerSpentMicros] = await Promise.all([
          this.redis.client.hmget(b.hashKey, 'spent', 'reserved', 'leased'),
          this.spentFromLedger(b, scopes),
        ]);
        let [spent, reserved, leased] = fields.map(integerOrNull);
        let corrupt: CorruptCounterFields | undefined;
        if (fields.some((f, i) => f !== null && [spent, reserved, leased][i] === null)) {
          const dropped = opts.rebuildMissing
            ? await this.redis.run(DROP_CORRUPT_COUNTER, { counterKey: b.hashKey })
            : null;
          corrupt = dropped ?? { spent: fields[0] ?? '', reserved: fields[1] ?? '', leased: fields[2] ?? '' };
          [spent, reserved, leased] = [null, null, null];
        }
        const rebuilt = spent === null && opts.rebuildMissing === true;
        if (rebuilt) await this.seedCounter(b, scopes, now);
        const standing = budgetStanding(b, spent ?? ledgerSpentMicros, reserved ?? 0n, leased ?? 0n);
        return { standing, counterSpentMicros: spent, ledgerSpentMicros, rebuilt, ...(corrupt ? { corrupt } : {}) };
      }),
    );
  }

  /** A counter is missing at the start of a period or after Redis lost it: rebuild it from the ledger. */
  private async seedCounter(budget: BoundBudget, scopes: SpendScopes, now: Date): Promise<void> {
    const spent = await this.spentFromLedger(budget, scopes);
    // The counter outlives its period by COUNTER_GRACE_SECONDS; a budget without a period, for good (0).
    const ttlSeconds = budget.resetsAt
      ? Math.ceil((budget.resetsAt.getTime() - now.getTime()) / 1000) + COUNTER_GRACE_SECONDS
      : 0;
    await this.redis.run(SEED_COUNTER, { counterKey: budget.hashKey, spent, ttlSeconds });
    if (spent > 0n) this.logger.log(`budget ${budget.rule.id} counter rebuilt from the ledger: ${spent} micro-units`);
  }

  /** The ledger's spend of the budget's period: rollups plus closing balance (see ledgerSpend), flat in ledger size. */
  private async spentFromLedger(budget: BoundBudget, scopes: SpendScopes): Promise<Micros> {
    const spent = await ledgerSpend(this.prisma, {
      orgId: scopes.orgId,
      scope: budget.rule.scope,
      scopeId: budget.rule.scopeId,
      start: budget.periodStart,
      end: budget.resetsAt,
    });
    return spent.micros;
  }
}

/** The organisation's budgets that apply to a caller, most specific first (as the cache keeps them). */
function budgetsApplying(rules: BudgetRule[], scopes: SpendScopes): BudgetRule[] {
  return rules.filter((b) => appliesToCaller(b, scopes));
}

/** An organisation's budgets read without a caller: only the org and its time zone matter to binding them. */
function orgWide(orgId: string, timeZone: string): SpendScopes {
  return { orgId, teamId: '', userId: '', keyId: '', timeZone };
}

/** A budget's standing from its counter's fields. */
export function budgetStanding(b: BoundBudget, spent: Micros, reserved: Micros, leased: Micros): BudgetStanding {
  const remaining = b.rule.limitMicros - spent - reserved;
  return {
    budgetId: b.rule.id,
    scope: b.rule.scope,
    scopeId: b.rule.scopeId,
    period: b.rule.period,
    mode: b.rule.mode,
    limitMicros: b.rule.limitMicros,
    spentMicros: spent,
    reservedMicros: reserved,
    leasedMicros: leased,
    remainingMicros: remaining > 0n ? remaining : 0n,
    periodStart: b.periodStart,
    resetsAt: b.resetsAt,
  };
}

/** A counter field as an amount: null when absent or not an integer (a corrupt counter). */
function integerOrNull(v: string | null): Micros | null {
  return v !== null && /^-?\d+$/.test(v) ? BigInt(v) : null;
}
