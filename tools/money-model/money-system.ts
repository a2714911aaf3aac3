// The real money path for the model-based test and `bench:money-model`: admission, completion,
// leases, reconciliation and the ledger writer as the edge and the worker run them (the services
// of libs/admission, libs/budget, libs/rate-limit, libs/reporting, libs/usage on real Redis and
// Postgres), driven command by command, and read back for comparison with MoneyModel.
import { randomUUID } from 'node:crypto';
import { Cluster } from 'ioredis';
import { INestApplication, Provider } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import {
  AdmissionLeases,
  AdmissionModule,
  AdmissionSettings,
  CallAdmission,
  CallAdmissionService,
  CallHold,
} from '@tollgate/admission';
import { availableMicros, BudgetModule, BudgetService } from '@tollgate/budget';
import { ConfigModule, loadEdgeConfig } from '@tollgate/config';
import { DbModule, PrismaService } from '@tollgate/db';
import { Micros, periodWindow } from '@tollgate/kernel';
import {
  LedgerService,
  MeteringModule,
  MeteringService,
  parseUsageEntry,
  UsageEvent,
  usageOutboxKeys,
} from '@tollgate/usage';
import {
  actualCallCost,
  estimateCallCost,
  FREE_PRICE,
  likelyOutputTokens,
  outputTokensAffordable,
  outputTopUp,
  AddPriceRuleInput,
  PriceRuleData,
  PricingModule,
  PricingService,
  splitSettlement,
  validatePriceRule,
} from '@tollgate/pricing';
import { RateLimitService } from '@tollgate/rate-limit';
import { ensureRedisEpoch, RedisModule, RedisService, ReplicaWait, scanTargets, shardOf } from '@tollgate/redis';
import { BUDGET_COUNTERS, BudgetCounters, BudgetReconcileService, ReconcileReport } from '@tollgate/reporting';
import {
  AdmissionAnswer,
  CallOutcome,
  KEYS_PER_ORG,
  MODEL_RESERVATION_TTL_MS,
  MODEL_WINDOW_MS,
  ToolSpec,
  USER_OF_KEY,
  WorldSpec,
} from './money-model';
import type { LocalRedisCluster } from '../redis-cluster/local-redis-cluster';
import { VirtualClock } from './virtual-clock';

const NAMESPACE = 'model';
const TOOL = { namespace: NAMESPACE, tool: 'priced' };
const UPSTREAM_ID = '00000000-0000-4000-8000-000000000001';

/**
 * Restarts Redis under a run without losing anything it acknowledged; resolves with what it did:
 * a standalone redis-server killed (-9) and started from its append-only file (fsync always), or
 * on a cluster a planned failover of a master or a replica killed and restarted (clusterRestarts).
 */
export type RedisRestart = () => Promise<string>;

/** A standalone redis-server of the run's own, killed and restarted from its append-only file. */
export function aofRestarts(own: { restart(): Promise<void> }): RedisRestart {
  return async () => {
    await own.restart();
    return 'aof';
  };
}

/**
 * A Redis Cluster of the run's own: in turn, a planned failover of a master (its replica takes
 * over once in sync), a replica killed (-9) and restarted (it syncs again from its master), and a
 * master killed (-9) once its replica holds everything it acknowledged (the replica is promoted,
 * the dead master restarts as its replica). None loses an acknowledged write: the model compares
 * exactly. (A master killed -9 with writes not yet replicated loses them: asynchronous
 * replication, see docs/architecture.md "What a failover loses"; bench:crash measures that, with
 * and without the opt-in replica wait.)
 */
export function clusterRestarts(cluster: LocalRedisCluster): RedisRestart {
  let turn = 0;
  return async () => {
    const masters = await cluster.masterPorts();
    const kind = turn++ % 3;
    if (kind === 0) {
      await cluster.plannedFailover(masters[turn % masters.length]);
      return 'cluster-failover';
    }
    if (kind === 2) {
      await cluster.killCaughtUpMaster(masters[turn % masters.length]);
      return 'cluster-master-kill';
    }
    const replicas = cluster.nodes.map((n) => n.port).filter((p) => !masters.includes(p));
    await cluster.restartReplica(replicas[turn % replicas.length]);
    return 'cluster-replica-restart';
  };
}

/** One generated world in the database: the organisations, their people, keys and budgets, by index. */
export interface World {
  spec: WorldSpec;
  orgs: {
    orgId: string;
    teamId: string;
    userIds: string[];
    keyIds: string[];
    /** Budget ids, in the order of the spec's budgets. */
    budgetIds: string[];
  }[];
}

/** A call an edge completes: at a given cost, or (priced) with its result. */
export type CompletedCall = { id: string; org: number; key: number } & (
  { actual: Micros; outcome?: undefined } | { outcome: CallOutcome; actual?: undefined }
);

/** A budget counter as Redis holds it (null: missing). */
export interface CounterReading {
  spent: bigint;
  reserved: bigint;
  leased: bigint;
}

const BUDGET_COUNTERS_PROVIDER: Provider = {
  provide: BUDGET_COUNTERS,
  inject: [BudgetService],
  useFactory: (budgets: BudgetService): BudgetCounters => budgets,
};

/** The money path of one edge and the worker's reconciliation and ledger writer, in one Nest application. */
export class MoneySystem {
  private readonly holds = new Map<string, CallHold>();
  /** What priced calls were admitted under, as the edge keeps it for their completion. */
  private readonly priced = new Map<string, { rule: PriceRuleData; reservedTokens: number; cap: number }>();
  /** Events the ledger writer has written (drained from the outbox), per organisation id: id -> cost. */
  private readonly ledger = new Map<string, Map<string, bigint>>();
  private plantSeq = 0;
  /** Malformed records planted per organisation id and not yet seen gone from its reservations. */
  private readonly planted = new Map<string, string[]>();
  /** Budget leases of edges that died: Redis holds them until it sweeps them after their deadline. */
  private deadLeases: { id: string; recordsKey: string; counterKey: string; held: bigint }[] = [];
  /** The edge's admission and lease book (replaced by new ones when the edge dies), on its clock. */
  private admission: CallAdmissionService;
  private leaseBook: AdmissionLeases;
  private clock: VirtualClock;
  private readonly first: { admission: CallAdmissionService; leaseBook: AdmissionLeases };

  private constructor(
    private readonly app: INestApplication,
    readonly leases: boolean,
    private readonly settings: AdmissionSettings,
    clock: VirtualClock,
    admission: CallAdmissionService,
    leaseBook: AdmissionLeases,
    private readonly budgets: BudgetService,
    private readonly reconcile: BudgetReconcileService,
    private readonly ledgerWriter: LedgerService,
    private readonly metering: MeteringService,
    private readonly pricing: PricingService,
    readonly prisma: PrismaService,
    readonly redis: RedisService,
    private readonly restartRedisServer: RedisRestart | null,
  ) {
    this.clock = clock;
    this.admission = admission;
    this.leaseBook = leaseBook;
    this.first = { admission, leaseBook };
  }

  /**
   * Boots the services on the platform `vars` describe (a process environment: DATABASE_URL,
   * REDIS_URL or REDIS_CLUSTER_NODES, REDIS_PREFIX...), with or without admission leases.
   */
  static async start(
    vars: Record<string, string>,
    opts: { leases: boolean; restartRedis?: RedisRestart; completionWait?: ReplicaWait },
  ): Promise<MoneySystem> {
    const clock = new VirtualClock(Date.now());
    const settings: AdmissionSettings = {
      reservationTtlMs: MODEL_RESERVATION_TTL_MS,
      leases: opts.leases,
      // Leases go back when the model says so (returnLeases) or when idle on the model's clock.
      leaseIdleMs: 60_000,
      clock,
      completionWait: opts.completionWait,
    };
    const moduleRef = await Test.createTestingModule({
      imports: [
        ConfigModule.forRoot(loadEdgeConfig(vars)),
        DbModule,
        RedisModule,
        BudgetModule,
        MeteringModule,
        PricingModule,
        AdmissionModule.forSettings(settings),
      ],
      providers: [BudgetReconcileService, BUDGET_COUNTERS_PROVIDER],
    }).compile();
    // Quiet: what goes wrong shows as a discrepancy with the model (and returning leases logs at error level).
    const app = moduleRef.createNestApplication({ logger: false });
    await app.init();
    const redis = app.get(RedisService);
    await ensureRedisEpoch(redis.client, redis.prefix); // what the worker sets at its first start
    return new MoneySystem(
      app,
      opts.leases,
      settings,
      clock,
      app.get(CallAdmissionService),
      app.get(AdmissionLeases),
      app.get(BudgetService),
      app.get(BudgetReconcileService),
      app.get(LedgerService),
      app.get(MeteringService),
      app.get(PricingService),
      app.get(PrismaService),
      redis,
      opts.restartRedis ?? null,
    );
  }

  async close(): Promise<void> {
    // An edge started after a death is not the application's: it shuts down as the application would.
    if (this.leaseBook !== this.first.leaseBook) await this.leaseBook.beforeApplicationShutdown();
    if (this.admission !== this.first.admission) await this.admission.onApplicationShutdown();
    await this.app.close();
  }

  /**
   * The edge's clock moves to `now` (the model's): the lease book's and the hold renewal's timers
   * due on the way run at their times.
   */
  async at(now: number): Promise<void> {
    await this.clock.advanceTo(now, () => this.admission.settled());
  }

  /** A new sequence starts at `now` (which may be earlier): the edge's timers run from it, as the model's. */
  startSequence(now: number): void {
    this.clock.reset(now);
  }

  /** The edge's event loop stalls until `now`: nothing of its own runs meanwhile (its timers fire late, at the next `at`). */
  stall(now: number): void {
    this.clock.jump(now);
  }

  /** Whether the edge's renewal of a call in flight found part of its hold gone, and renews it no more. */
  lapsed(id: string): boolean {
    return this.holds.get(id)?.lapsed === true;
  }

  /** Whether a call in flight was admitted against the edge's leases (which the edge renews while it lives). */
  underLease(id: string): boolean {
    return (this.holds.get(id)?.leased ?? null) !== null;
  }

  /**
   * kill -9 of the edge: its calls in flight never complete, its leases are neither renewed nor
   * given back (Redis sweeps them after their deadline). A new edge (new lease book, admission and
   * clock, the same services behind them) serves the calls from then on.
   */
  async crashEdge(now: number): Promise<void> {
    this.deadLeases.push(...this.leaseBook.budgetLeases());
    await this.admission.settled();
    // Its completion connection closes and its hold renewal stops; the dead lease book's timers stop with its clock.
    await this.admission.onApplicationShutdown();
    this.holds.clear();
    this.priced.clear();
    this.clock = new VirtualClock(now);
    const settings = { ...this.settings, clock: this.clock };
    this.leaseBook = new AdmissionLeases(this.redis, settings);
    this.leaseBook.onModuleInit();
    this.admission = new CallAdmissionService(
      this.redis,
      this.app.get(RateLimitService),
      this.budgets,
      this.leaseBook,
      settings,
    );
    this.admission.onModuleInit();
  }

  /**
   * A budget counter's `spent` becomes a decimal (a bad restore, a hand edit: HINCRBY refuses it).
   * False, and nothing changed, when a lease of this edge or of a dead one holds the counter (its
   * conversions and sweep would then be refused or moved aside, which the model does not follow).
   */
  async corruptCounter(world: World, org: number, i: number, now: number): Promise<boolean> {
    const key = this.counterKey(world, org, i, now);
    if ((await this.deadLeaseHoldings()).has(key) || this.leaseBook.budgetLeases().some((l) => l.counterKey === key))
      return false;
    await this.redis.client.hset(key, 'spent', '1.5');
    return true;
  }

  /** Whether each call's reservation record is still in Redis (not yet settled or swept). */
  async recordsPresent(world: World, calls: { org: number; id: string }[]): Promise<boolean[]> {
    const present = await Promise.all(
      calls.map((c) => this.redis.client.hexists(this.budgets.recordKeys(world.orgs[c.org].orgId)[0], c.id)),
    );
    return present.map((p) => p === 1);
  }

  /** What dead edges' leases still hold in Redis (their records not yet swept), per budget counter key. */
  async deadLeaseHoldings(): Promise<Map<string, bigint>> {
    const present = await Promise.all(this.deadLeases.map((l) => this.redis.client.hexists(l.recordsKey, l.id)));
    this.deadLeases = this.deadLeases.filter((_, i) => present[i] === 1);
    const out = new Map<string, bigint>();
    for (const l of this.deadLeases) out.set(l.counterKey, (out.get(l.counterKey) ?? 0n) + l.held);
    return out;
  }

  /**
   * Creates a world's organisations in Postgres (ids made here, one statement per table) and seeds
   * their budget counters (spent 0), as a first call would.
   */
  async createWorld(spec: WorldSpec, now: number): Promise<World> {
    const world: World = {
      spec,
      orgs: spec.orgs.map((o) => ({
        orgId: randomUUID(),
        teamId: randomUUID(),
        userIds: [randomUUID(), randomUUID()],
        keyIds: Array.from({ length: KEYS_PER_ORG }, () => randomUUID()),
        budgetIds: o.budgets.map(() => randomUUID()),
      })),
    };
    const holderOf = (w: World['orgs'][number], scope: string, who: number) =>
      scope === 'KEY' ? w.keyIds[who] : scope === 'USER' ? w.userIds[who] : scope === 'TEAM' ? w.teamId : w.orgId;
    await this.prisma.$transaction(async (tx) => {
      await tx.organization.createMany({
        data: world.orgs.map((w) => ({ id: w.orgId, name: 'model', slug: `m-${w.orgId}`, timeZone: 'UTC' })),
      });
      await tx.team.createMany({ data: world.orgs.map((w) => ({ id: w.teamId, orgId: w.orgId, name: 't' })) });
      await tx.user.createMany({
        data: world.orgs.flatMap((w) => w.userIds.map((id, u) => ({ id, orgId: w.orgId, email: `u${u}-${id}@x` }))),
      });
      await tx.virtualKey.createMany({
        data: world.orgs.flatMap((w) =>
          w.keyIds.map((id, k) => ({
            id,
            orgId: w.orgId,
            teamId: w.teamId,
            userId: w.userIds[USER_OF_KEY[k]],
            name: `k${k}`,
            prefix: `tg_m${k}`,
            secretHash: id,
          })),
        ),
      });
      await tx.budget.createMany({
        data: world.orgs.flatMap((w, o) =>
          spec.orgs[o].budgets.map((b, i) => ({
            id: w.budgetIds[i],
            orgId: w.orgId,
            scope: b.scope,
            scopeId: holderOf(w, b.scope, b.who),
            period: b.period,
            limitMicros: b.limit,
            mode: b.hard ? ('HARD' as const) : ('SOFT' as const),
          })),
        ),
      });
      await tx.rateLimit.createMany({
        data: world.orgs.flatMap((w, o) => {
          const rules: { scope: 'KEY' | 'ORG'; scopeId: string; maxConcurrent?: number; callsPerWindow?: number }[] =
            [];
          spec.orgs[o].keyConcurrency.forEach((max, k) => {
            if (max !== null) rules.push({ scope: 'KEY', scopeId: w.keyIds[k], maxConcurrent: max });
          });
          const calls = spec.orgs[o].callsPerWindow;
          if (calls !== null) rules.push({ scope: 'ORG', scopeId: w.orgId, callsPerWindow: calls });
          return rules.map((r) => ({
            orgId: w.orgId,
            toolPattern: '*:*',
            windowSeconds: MODEL_WINDOW_MS / 1000,
            ...r,
          }));
        }),
      });
      // Price rules as the price book validates them, added at the world's start (one statement),
      // each a millisecond after the one before: the book's order is the order they were added in.
      await tx.priceRule.createMany({
        data: world.orgs.flatMap((w, o) =>
          spec.orgs[o].prices.map((p, i) => {
            const rule: AddPriceRuleInput = {
              toolPattern: p.pattern,
              perCallMicros: p.perCall,
              perOutputTokenMicros: p.perToken,
              acceptReportedCost: p.reportedCap !== null,
              reportedCostCapMicros: p.reportedCap ?? 0n,
              chargeFailedCalls: p.chargeFailed,
              effectiveFrom: new Date(now + p.from),
            };
            const bad = validatePriceRule(rule, new Date(now));
            if (bad) throw new Error(`model: the price book refuses ${JSON.stringify(bad)}`);
            return {
              orgId: w.orgId,
              ...rule,
              effectiveUntil: p.until === null ? null : new Date(now + p.until),
              createdAt: new Date(now + i),
            };
          }),
        ),
      });
    });
    for (const w of world.orgs)
      if (w.budgetIds.length > 0)
        await this.budgets.checkCounters(w.orgId, 'UTC', { rebuildMissing: true, now: new Date(now) });
    return world;
  }

  private scopesOf(world: World, org: number, key: number) {
    const o = world.orgs[org];
    return {
      orgId: o.orgId,
      teamId: o.teamId,
      userId: o.userIds[USER_OF_KEY[key]],
      keyId: o.keyIds[key],
      timeZone: 'UTC',
    };
  }

  /** Admits a call as the edge does before its upstream; the answer as the agent would tell it apart. */
  async admit(
    world: World,
    id: string,
    org: number,
    key: number,
    estimate: bigint,
    now: number,
  ): Promise<AdmissionAnswer> {
    const a = await this.admission.admit(this.scopesOf(world, org, key), TOOL, id, estimate, now);
    await this.admission.settled();
    return this.answerOf(id, a);
  }

  /**
   * Admits a call of a priced tool as the edge does (GovernedCallPipeline.admitCall): the rule in
   * force now from the price book, a reservation for the tool's likely output; refused by a hard
   * budget that can still pay for some output, fitted to it and asked again.
   */
  async admitPriced(
    world: World,
    id: string,
    org: number,
    key: number,
    tool: ToolSpec,
    now: number,
  ): Promise<{ answer: AdmissionAnswer; estimate: Micros }> {
    const orgId = world.orgs[org].orgId;
    const rule = (await this.pricing.priceFor(orgId, UPSTREAM_ID, tool.name, new Date(now))) ?? FREE_PRICE;
    let reservedTokens = likelyOutputTokens(tool.p99, tool.cap);
    const admit = () =>
      this.admission.admit(
        this.scopesOf(world, org, key),
        { namespace: NAMESPACE, tool: tool.name },
        id,
        estimateCallCost(rule, reservedTokens),
        now,
      );
    let a = await admit();
    if (!a.ok && 'budgetExceeded' in a) {
      const fits = outputTokensAffordable(rule, availableMicros(a.budgetExceeded.exceeded));
      if (fits !== null && fits >= 1 && fits < reservedTokens) {
        reservedTokens = fits;
        a = await admit();
      }
    }
    await this.admission.settled();
    if (a.ok) this.priced.set(id, { rule, reservedTokens, cap: tool.cap });
    return { answer: this.answerOf(id, a), estimate: estimateCallCost(rule, reservedTokens) };
  }

  /**
   * The completion step of calls (several: in one turn, as concurrent calls complete): settlement
   * and usage event. A call given its `actual` cost settles at it; a priced call, given its result
   * (`outcome`), is settled as the edge does: output beyond the reservation admitted as a top-up
   * (budgets only), the cost from its rule, split between the reservation and the top-up. Resolves
   * with each call's cost, and whether its top-up was admitted under the edge's leases.
   */
  async complete(
    world: World,
    calls: CompletedCall[],
    now: number,
  ): Promise<{ cost: Micros; topUpUnderLease: boolean }[]> {
    const settlements = [];
    for (const c of calls) {
      const hold = this.holds.get(c.id)!;
      this.holds.delete(c.id);
      if (c.outcome === undefined) {
        settlements.push({ c, hold, topUp: null, cost: c.actual, split: { reservation: c.actual, topUp: 0n } });
        continue;
      }
      const { rule, reservedTokens, cap } = this.priced.get(c.id)!;
      this.priced.delete(c.id);
      const want = outputTopUp(rule, reservedTokens, c.outcome.tokens, cap);
      let deliverable = cap;
      let topUp: CallHold | null = null;
      if (want) {
        const more = await this.admission.admit(
          this.scopesOf(world, c.org, c.key),
          null,
          randomUUID(),
          want.micros,
          now,
        );
        topUp = more.ok ? more.hold : null;
        deliverable = topUp ? reservedTokens + want.tokens : reservedTokens;
      }
      const cost =
        c.outcome.tokens > deliverable
          ? actualCallCost(rule, { failed: true, outputTokens: 0, reportedCostMicros: null }, cap)
          : actualCallCost(
              rule,
              { failed: c.outcome.failed, outputTokens: c.outcome.tokens, reportedCostMicros: c.outcome.reported },
              deliverable,
            );
      const split = topUp ? splitSettlement(cost, hold.estimate) : { reservation: cost, topUp: 0n };
      settlements.push({ c, hold, topUp, cost, split });
    }
    await Promise.all(
      settlements.flatMap(({ c, hold, topUp, cost, split }) => [
        this.admission.complete(hold, split.reservation, this.usageEntry(world, c, cost, now)),
        topUp ? this.admission.complete(topUp, split.topUp, null) : null,
      ]),
    );
    await this.admission.settled();
    return settlements.map((s) => ({ cost: s.cost, topUpUnderLease: (s.topUp?.leased ?? null) !== null }));
  }

  private answerOf(id: string, a: CallAdmission): AdmissionAnswer {
    if (a.ok) {
      this.holds.set(id, a.hold);
      return { kind: 'admitted' };
    }
    if ('rateLimited' in a) return { kind: 'rate-limit' };
    if ('countersUnavailable' in a) return { kind: 'counters-unavailable', reason: a.countersUnavailable.reason };
    return { kind: 'budget', scope: a.budgetExceeded.exceeded.scope };
  }

  private usageEntry(world: World, c: { id: string; org: number; key: number }, cost: Micros, now: number) {
    const { orgId, teamId, userId, keyId } = this.scopesOf(world, c.org, c.key);
    const event: UsageEvent = {
      id: c.id,
      orgId,
      teamId,
      userId,
      keyId,
      upstreamId: UPSTREAM_ID,
      toolName: 'model__priced',
      outcome: 'OK',
      costMicros: cost,
      inputTokens: 0,
      outputTokens: 0,
      latencyMs: 1,
      priceRuleId: null,
      occurredAt: new Date(now),
    };
    return this.metering.outboxEntry(event);
  }

  /** A call that never reached its upstream: freed, uncharged, no usage event. */
  async cancel(id: string): Promise<void> {
    this.admission.release(this.holds.get(id)!);
    this.holds.delete(id);
    this.priced.delete(id);
    await this.admission.settled();
  }

  /**
   * The edge died holding the call: nothing completes or renews it (its reservation is left to the
   * sweep). Handed over to nobody, so this edge stops renewing it (a leased call's share is its lease's).
   */
  crash(id: string): void {
    const hold = this.holds.get(id)!;
    if (!hold.leased) this.admission.handOver(hold);
    this.holds.delete(id);
    this.priced.delete(id);
  }

  /** Gives back what this edge's leases hold unused (as when they go idle or the edge shuts down). */
  async returnLeases(): Promise<void> {
    this.leaseBook.dropAll('the model returns every lease');
    await this.admission.settled();
  }

  /**
   * Plants a malformed record in an organisation's reservations, due `now`: a reservation (amount
   * not an integer, a counter of another organisation, no counter) or a lease (`L:` id: what it
   * holds not an integer, or a counter of another organisation).
   */
  async plantMalformed(world: World, org: number, kind: number, now: number): Promise<void> {
    const orgId = world.orgs[org].orgId;
    const [r, z] = this.budgets.recordKeys(orgId);
    const seq = ++this.plantSeq;
    const other = world.orgs[(org + 1) % world.orgs.length];
    const own = this.redis.orgKey(orgId, 'budget', world.orgs[org].budgetIds[0] ?? 'x', '0');
    // A counter of another organisation: never written from this one's records.
    const foreign = this.redis.orgKey(other.orgId, 'budget', other.budgetIds[0] ?? 'x', '0');
    const records: [string, Record<string, string>][] = [
      [`malformed-${seq}`, { [`malformed-${seq}`]: `not-a-number|${this.redis.orgKey(orgId, 'budget', 'x', '0')}` }],
      [`malformed-${seq}`, { [`malformed-${seq}`]: `5|${foreign}` }],
      [`malformed-${seq}`, { [`malformed-${seq}`]: '-7' }],
      [`L:malformed:${seq}`, { [`L:malformed:${seq}`]: own, [`L:malformed:${seq}#`]: 'x' }],
      [`L:malformed:${seq}`, { [`L:malformed:${seq}`]: foreign, [`L:malformed:${seq}#`]: '5' }],
    ];
    const [id, fields] = records[kind % records.length];
    await this.redis.client.hset(r, fields);
    await this.redis.client.zadd(z, now, id);
    const planted = this.planted.get(orgId) ?? [];
    planted.push(id);
    this.planted.set(orgId, planted);
  }

  /** How many of the malformed records planted in an organisation are still among its reservations (not swept yet). */
  async plantedUnswept(world: World, org: number): Promise<number> {
    const orgId = world.orgs[org].orgId;
    const ids = this.planted.get(orgId) ?? [];
    const present = await Promise.all(
      ids.map((id) => this.redis.client.hexists(this.budgets.recordKeys(orgId)[0], id)),
    );
    const left = ids.filter((_, i) => present[i] === 1);
    this.planted.set(orgId, left);
    return left.length;
  }

  /** The Redis key of a budget's counter for the current period. */
  counterKey(world: World, org: number, i: number, now: number): string {
    const o = world.orgs[org];
    const spec = world.spec.orgs[org].budgets[i];
    const start = periodWindow(spec.period, new Date(now), 'UTC').start.getTime();
    return this.redis.orgKey(o.orgId, 'budget', o.budgetIds[i], String(start));
  }

  /** The counter of a budget's current period, as Redis holds it (null: missing; 'corrupt': a field not an integer). */
  async counter(world: World, org: number, i: number, now: number): Promise<CounterReading | 'corrupt' | null> {
    const key = this.counterKey(world, org, i, now);
    const [spent, reserved, leased] = await this.redis.client.hmget(key, 'spent', 'reserved', 'leased');
    if (spent === null) return null;
    if (![spent, reserved, leased].every((v) => v === null || /^-?\d+$/.test(v))) return 'corrupt';
    return { spent: BigInt(spent), reserved: BigInt(reserved ?? '0'), leased: BigInt(leased ?? '0') };
  }

  /** Unused allowance this edge's leases hold, summed over budgets. */
  leaseHoldings(): bigint {
    return this.leaseBook.holdings().budgetMicros;
  }

  /** The usage events of an organisation the ledger writer has written: id -> cost. */
  written(world: World, org: number): Map<string, bigint> {
    return this.ledger.get(world.orgs[org].orgId) ?? new Map();
  }

  /** The usage events of an organisation in the outbox: id -> cost. */
  async outbox(world: World, org: number): Promise<Map<string, bigint>> {
    const orgId = world.orgs[org].orgId;
    const out = new Map<string, bigint>();
    for (const [, fields] of await this.redis.client.xrange(this.streamOf(orgId), '-', '+')) {
      const e = parseUsageEntry(fields);
      if (!e.event) throw new Error(`model: an outbox entry the ledger writer cannot read: ${e.problem}`);
      if (e.event.orgId === orgId) out.set(e.event.id, e.event.costMicros);
    }
    return out;
  }

  /** What the worker's ledger consumer does: the world's outbox events into the ledger, then out of the outbox. */
  async drain(world: World): Promise<void> {
    const streams = new Set(world.orgs.map((o) => this.streamOf(o.orgId)));
    const orgIds = new Set(world.orgs.map((o) => o.orgId));
    for (const stream of streams) {
      const entries = await this.redis.client.xrange(stream, '-', '+');
      const events: UsageEvent[] = [];
      const ids: string[] = [];
      for (const [entryId, fields] of entries) {
        const e = parseUsageEntry(fields);
        if (!e.event || !orgIds.has(e.event.orgId)) continue;
        events.push(e.event);
        ids.push(entryId);
      }
      const written = await this.ledgerWriter.writeUsageEvents(events);
      if (written !== events.length)
        throw new Error(`model: ${events.length - written} usage event(s) were already in the ledger (written twice)`);
      for (const e of events) {
        const written = this.ledger.get(e.orgId) ?? new Map<string, bigint>();
        written.set(e.id, e.costMicros);
        this.ledger.set(e.orgId, written);
      }
      if (ids.length > 0) await this.redis.client.xdel(stream, ...ids);
    }
  }

  /** The worker's reconciliation of one organisation, with repair. */
  reconcileOrg(world: World, org: number, now: number): Promise<ReconcileReport> {
    return this.reconcile.reconcileOrg(world.orgs[org].orgId, { repair: true, now: new Date(now) });
  }

  /** Redis loses every key of the deployment (a restart without persistence, a failover to an empty replica). */
  async loseRedis(): Promise<void> {
    const client = this.redis.client;
    // On a cluster every node that answers is scanned, replicas too: after a failover the client's
    // idea of which nodes are masters may be stale, and a replica just restarted may still be
    // reconnecting (its master holds the same keys). Keys are deleted through the client, which
    // follows MOVED.
    const nodes =
      client instanceof Cluster ? client.nodes('all').filter((n) => n.status === 'ready') : await scanTargets(client);
    for (const node of nodes) {
      let cursor = '0';
      do {
        const [next, keys] = await node.scan(cursor, 'MATCH', `${this.redis.prefix}:*`, 'COUNT', 1000);
        cursor = next;
        await Promise.all(keys.map((k) => client.unlink(k)));
      } while (cursor !== '0');
    }
  }

  /** What the worker does on finding the epoch gone: counters rebuilt from the ledger, then a new epoch. */
  async rebuild(world: World, now: number): Promise<ReconcileReport[]> {
    const reports: ReconcileReport[] = [];
    for (let org = 0; org < world.orgs.length; org++) reports.push(await this.reconcileOrg(world, org, now));
    await ensureRedisEpoch(this.redis.client, this.redis.prefix);
    return reports;
  }

  /** Whether Redis can be restarted under the run (a Redis of its own: see RedisRestart). */
  get canRestartRedis(): boolean {
    return this.restartRedisServer !== null;
  }

  /**
   * A Redis restart that loses nothing acknowledged (RedisRestart); resolves with what it was,
   * once this system's connections answer again.
   */
  async restartRedis(): Promise<string> {
    const what = await this.restartRedisServer!();
    await this.redis.client.ping();
    return what;
  }

  /** Sets the epoch where it is missing, as the worker does once Redis holds the deployment's state. */
  async ensureEpoch(): Promise<void> {
    await ensureRedisEpoch(this.redis.client, this.redis.prefix);
  }

  private streamOf(orgId: string): string {
    return usageOutboxKeys(this.redis.prefix, shardOf(orgId)).events;
  }
}
