import { Inject, Injectable, Logger } from '@nestjs/common';
import { AuditEntry, recordAudit, systemActor } from '@tollgate/audit';
import { Prisma, PrismaService, SpendWindow, ledgerSpend } from '@tollgate/db';
import { USAGE_ENTRY_FIELD, usageOutboxKeys } from '@tollgate/usage';
import { Counter, Registry } from 'prom-client';
import { RedisService, shardOf } from '@tollgate/redis';
import { BUDGET_COUNTERS, BudgetCounterReading, BudgetCounters } from './budget-counters.port';
import { orgTimeZone, orgsWithBudgets } from './org-directory';
import { REPAIR_HELD, REPAIR_SPENT } from './budget-reconcile-scripts';

type Standing = BudgetCounterReading['standing'];

/** What became of a drift: repaired, left because the counter kept moving, or only reported. */
export type DriftRepair = 'repaired' | 'counter-moving' | 'not-requested';

/** One budget's counter against the ledger; money as decimal strings of micro-units (exact in JSON). */
export interface BudgetDrift {
  budgetId: string;
  scope: Standing['scope'];
  scopeId: string;
  period: Standing['period'];
  periodStart: string;
  counterSpentMicros: string | null;
  ledgerSpentMicros: string;
  /** Settled calls still in the usage outbox (not in the ledger yet): the counter holds them already. */
  outboxSpentMicros: string;
  /** counter - (ledger + outbox): a settlement lost before its usage event, a tampered counter, an event lost. */
  driftMicros: string;
  /** Set on drift entries only. */
  repair?: DriftRepair;
}

/** A counter's `spent` set to the ledger plus the outbox (also recorded as an AuditEvent). */
export interface BudgetRepair {
  budgetId: string;
  scope: Standing['scope'];
  scopeId: string;
  period: Standing['period'];
  periodStart: string;
  beforeMicros: string;
  afterMicros: string;
}

export interface ReconcileReport {
  orgId: string;
  ranAt: string;
  budgetsChecked: number;
  /** Budgets whose counter differs from the ledger plus the outbox. */
  drift: BudgetDrift[];
  /** Counters set back to the ledger plus the outbox (only when repair was asked). */
  repaired: BudgetRepair[];
  /** `reserved` and `leased` set back to the records in flight (only when repair was asked). */
  heldRepaired?: HeldRepair[];
  /** Malformed reservation or lease records the sweep moved aside, now audited and dropped. */
  malformedRecords?: { id: string; record: string }[];
  /** Budgets whose counter was missing and has been rebuilt from the ledger. */
  rebuilt: BudgetDrift[];
  /**
   * Counters that held a field that is not an integer (which refuses every admission on them),
   * dropped and rebuilt from the ledger (also in `rebuilt`, and audited): the fields as found.
   */
  corruptRebuilt?: { budgetId: string; fields: { spent: string; reserved: string; leased: string } }[];
}

export interface ReconcileOptions {
  /** Set drifted counters' `spent` to the ledger plus the outbox (default: report only). */
  repair?: boolean;
  /** Who asked, for the audit trail of repairs (e.g. `system:budget-reconcile`). */
  actor?: string;
  now?: Date;
}

/**
 * What `tollgate_money_records_repaired_total` counts, as kind and reason: a counter field set back
 * (`spent` to the ledger plus the outbox; `reserved` and `leased` to the records in flight), a
 * reservation or lease record the sweep found unreadable and moved aside, audited and dropped here,
 * or a whole counter holding a field that is not an integer, dropped and rebuilt from the ledger.
 */
const REPAIRED_RECORD_LABELS = [
  { kind: 'spent', reason: 'ledger-drift' },
  { kind: 'reserved', reason: 'records-in-flight' },
  { kind: 'leased', reason: 'records-in-flight' },
  { kind: 'reservation', reason: 'malformed' },
  { kind: 'lease', reason: 'malformed' },
  { kind: 'counter', reason: 'corrupt' },
] as const;

const LAST_REPORT_TTL_SECONDS = 7 * 24 * 3600;
/** A counter that moved between reading and repairing is read again, at most this many times. */
const REPAIR_ATTEMPTS = 3;
const OUTBOX_PAGE = 1000;
const SCOPE_COLUMN = { ORG: 'orgId', TEAM: 'teamId', USER: 'userId', KEY: 'keyId' } as const;

/** A counter's `reserved` or `leased` set back to what the records in flight hold (also audited). */
export interface HeldRepair {
  budgetId: string;
  field: 'reserved' | 'leased';
  beforeMicros: string;
  afterMicros: string;
}

/** The fields of an outbox event that reconciliation needs. */
interface OutboxEvent {
  id: string;
  orgId: string;
  teamId: string;
  userId: string;
  keyId: string;
  costMicros: bigint;
  occurredAt: Date;
}

/**
 * Checks each budget's Redis counter for its current period against the ledger plus the usage
 * events still in the outbox (settled, not yet written), rebuilds a missing counter from the
 * ledger, and with `repair` sets a drifted counter's `spent` back to that sum, with an audit entry.
 * The last report is kept in Redis.
 *
 * A drift is computed from one consistent view: the counter is read first, then the outbox, then
 * the ledger (one snapshot, which also tells which outbox events are already written); the repair
 * applies only if the counter's `spent` has not moved since it was read. This relies on a call's
 * spend reaching its counter no later than its usage event reaches the outbox, which is how the
 * edge completes a call.
 */
@Injectable()
export class BudgetReconcileService {
  private readonly logger = new Logger(BudgetReconcileService.name);
  /** Served on the /metrics of the process that reconciles (the worker). */
  readonly registry = new Registry();
  private readonly repairedRecords = new Counter({
    name: 'tollgate_money_records_repaired_total',
    help: 'Budget counter fields reconciliation set back (kind spent, reserved, leased) and malformed reservation or lease records it audited and dropped after the sweep moved them aside (kind reservation, lease)',
    labelNames: ['kind', 'reason'],
    registers: [this.registry],
  });

  constructor(
    private readonly prisma: PrismaService,
    private readonly redis: RedisService,
    @Inject(BUDGET_COUNTERS) private readonly counters: BudgetCounters,
  ) {
    // Every series from the start at 0, so a rate() sees the first repair.
    for (const labels of REPAIRED_RECORD_LABELS) this.repairedRecords.inc(labels, 0);
  }

  async reconcileOrg(orgId: string, opts: ReconcileOptions = {}): Promise<ReconcileReport> {
    const now = opts.now ?? new Date();
    const timeZone = await orgTimeZone(this.prisma, orgId);
    const readings =
      timeZone === null ? [] : await this.counters.checkCounters(orgId, timeZone, { rebuildMissing: true, now });
    const report: ReconcileReport = {
      orgId,
      ranAt: now.toISOString(),
      budgetsChecked: readings.length,
      drift: [],
      repaired: [],
      rebuilt: readings.filter((r) => r.rebuilt).map((r) => driftRow(r.standing, null, r.ledgerSpentMicros, 0n)),
    };
    const corrupt = readings.filter((r) => r.corrupt && r.rebuilt);
    if (corrupt.length > 0) {
      report.corruptRebuilt = corrupt.map((r) => ({ budgetId: r.standing.budgetId, fields: r.corrupt! }));
      await this.auditCorruptRebuilt(orgId, report.corruptRebuilt, opts.actor ?? 'system:budget-reconcile');
    }
    // Every counter is measured against the outbox too: one equal to the ledger while the org has
    // calls in the outbox is short (a counter rebuilt from the ledger alone, for one).
    let suspects = readings.map((r) => r.standing);
    for (let attempt = 1; suspects.length > 0 && attempt <= REPAIR_ATTEMPTS; attempt++) {
      const checks = await this.measure(orgId, suspects);
      const drifted = checks.filter((c) => c.counter !== null && c.counter !== c.ledger + c.outbox);
      const moving: Standing[] = [];
      for (const c of drifted) {
        const row = driftRow(c.standing, c.counter, c.ledger, c.outbox);
        if (opts.repair) {
          const repaired = await this.repair(
            orgId,
            c.standing,
            c.counter!,
            c.ledger + c.outbox,
            opts.actor ?? 'system:budget-reconcile',
          );
          if (repaired) report.repaired.push(repaired);
          // A counter still moving is measured again; on the last attempt its drift stays reported.
          else if (attempt < REPAIR_ATTEMPTS) {
            moving.push(c.standing);
            continue;
          }
          row.repair = repaired ? 'repaired' : 'counter-moving';
        } else {
          row.repair = 'not-requested';
        }
        report.drift.push(row);
      }
      suspects = moving;
    }
    if (opts.repair && readings.length > 0) {
      Object.assign(
        report,
        await this.repairHeld(
          orgId,
          readings.map((r) => r.standing),
          opts.actor ?? 'system:budget-reconcile',
        ),
      );
    }
    for (const d of report.drift) {
      this.logger.warn(
        `budget drift org=${orgId} budget=${d.budgetId} scope=${d.scope} period=${d.period} counter=${d.counterSpentMicros} ledger=${d.ledgerSpentMicros} outbox=${d.outboxSpentMicros} drift=${d.driftMicros} repair=${d.repair}`,
      );
    }
    for (const d of report.rebuilt)
      this.logger.log(`budget counter rebuilt org=${orgId} budget=${d.budgetId} from ledger=${d.ledgerSpentMicros}`);
    await this.redis.client.set(this.lastReportKey(orgId), JSON.stringify(report), 'EX', LAST_REPORT_TTL_SECONDS);
    return report;
  }

  async reconcileAll(opts: ReconcileOptions = {}): Promise<ReconcileReport[]> {
    const out: ReconcileReport[] = [];
    const now = opts.now ?? new Date();
    for (const orgId of await orgsWithBudgets(this.prisma)) out.push(await this.reconcileOrg(orgId, { ...opts, now }));
    return out;
  }

  /** The last reconciliation of an org, or null if none ran in the past week. */
  async lastReport(orgId: string): Promise<ReconcileReport | null> {
    const raw = await this.redis.client.get(this.lastReportKey(orgId));
    return raw ? (JSON.parse(raw) as ReconcileReport) : null;
  }

  /**
   * Counters, then the org's outbox events, then the ledger in one snapshot. An event leaves the
   * outbox only after its row is committed, so each settled event is seen in one of the two; one
   * seen in both (written, not yet deleted) counts once.
   */
  private async measure(orgId: string, standings: Standing[]) {
    const counters = await this.redis.client
      .pipeline(standings.map((s) => ['hget', this.counterKey(orgId, s), 'spent']))
      .exec();
    const outbox = await this.outboxEvents(orgId);
    const ids = [...outbox.keys()];
    // Ledger sums read the rollups and closing balances (ledgerSpend), in the same snapshot as the ids.
    const [written, sums] = await this.prisma.$transaction(
      async (tx) => {
        // The ledger's key is (orgId, occurredAt, id): each event is looked up by its org and time.
        // (A time that is not one was never written: the worker dead-letters such an entry.)
        const times = [...new Set([...outbox.values()].map((e) => e.occurredAt.getTime()))]
          .filter((t) => !Number.isNaN(t))
          .map((t) => new Date(t));
        const found = await tx.usageEvent.findMany({
          where: { orgId, occurredAt: { in: times }, id: { in: ids } },
          select: { id: true },
        });
        const spent: bigint[] = [];
        for (const s of standings) spent.push((await ledgerSpend(tx, ledgerWindow(orgId, s))).micros);
        return [found, spent] as const;
      },
      { isolationLevel: Prisma.TransactionIsolationLevel.RepeatableRead },
    );
    for (const { id } of written as { id: string }[]) outbox.delete(id);
    return standings.map((standing, i) => {
      const raw = counters?.[i]?.[1] as string | null | undefined;
      let pending = 0n;
      for (const e of outbox.values()) if (counts(standing, e)) pending += e.costMicros;
      const ledger = sums[i];
      // A counter corrupted since it was checked is left for the next run (it is rebuilt then).
      const counter = typeof raw === 'string' && /^-?\d+$/.test(raw) ? BigInt(raw) : null;
      return { standing, counter, ledger, outbox: pending };
    });
  }

  /** Sets `spent` to `target` if it still holds `seen`; writes the audit entry. Null if the counter moved or is gone. */
  private async repair(
    orgId: string,
    s: Standing,
    seen: bigint,
    target: bigint,
    actor: string,
  ): Promise<BudgetRepair | null> {
    const res = await this.redis.run(REPAIR_SPENT, { counterKey: this.counterKey(orgId, s), seen, target });
    if (res !== 'set') return null;
    const repaired: BudgetRepair = {
      budgetId: s.budgetId,
      scope: s.scope,
      scopeId: s.scopeId,
      period: s.period,
      periodStart: s.periodStart.toISOString(),
      beforeMicros: seen.toString(),
      afterMicros: target.toString(),
    };
    await recordAudit(this.prisma, systemActor(actor), {
      orgId,
      action: 'budget.counter-repaired',
      targetType: 'budget',
      targetId: s.budgetId,
      details: { ...repaired },
    });
    this.repairedRecords.inc({ kind: 'spent', reason: 'ledger-drift' });
    this.logger.warn(
      `budget counter repaired org=${orgId} budget=${s.budgetId} scope=${s.scope} spent ${seen} -> ${target}`,
    );
    return repaired;
  }

  /** Audits and counts counters rebuilt because a field was not an integer; the rest of the repair follows as usual. */
  private async auditCorruptRebuilt(
    orgId: string,
    rebuilt: NonNullable<ReconcileReport['corruptRebuilt']>,
    actor: string,
  ): Promise<void> {
    await recordAudit(
      this.prisma,
      systemActor(actor),
      ...rebuilt.map((c): AuditEntry => ({
        orgId,
        action: 'budget.counter-rebuilt',
        targetType: 'budget',
        targetId: c.budgetId,
        details: { why: 'a counter field was not an integer', found: c.fields },
      })),
    );
    for (const c of rebuilt) {
      this.repairedRecords.inc({ kind: 'counter', reason: 'corrupt' });
      this.logger.warn(
        `corrupt budget counter rebuilt from the ledger org=${orgId} budget=${c.budgetId} found=${JSON.stringify(c.fields)}`,
      );
    }
  }

  /**
   * `reserved` and `leased` of the org's current counters, set to what its reservations and leases
   * hold (a settlement or sweep lost between its writes, a counter rebuilt while calls were in
   * flight); quarantined malformed records are audited and dropped.
   */
  private async repairHeld(
    orgId: string,
    standings: Standing[],
    actor: string,
  ): Promise<{ heldRepaired: HeldRepair[]; malformedRecords: { id: string; record: string }[] }> {
    const recordsKey = this.redis.orgKey(orgId, 'budget-resv');
    const { counters, malformed: malformedRecords } = await this.redis.run(REPAIR_HELD, {
      recordsKey,
      malformedKey: `${recordsKey}:malformed`,
      counterKeys: standings.map((s) => this.counterKey(orgId, s)),
    });
    const heldRepaired: HeldRepair[] = [];
    standings.forEach((s, i) => {
      const c = counters[i];
      if (!c) return;
      for (const field of ['reserved', 'leased'] as const) {
        const { before, after } = c[field];
        if (before !== after.toString())
          heldRepaired.push({ budgetId: s.budgetId, field, beforeMicros: before, afterMicros: after.toString() });
      }
    });
    const audits: AuditEntry[] = [
      ...heldRepaired.map((h): AuditEntry => ({
        orgId,
        action: 'budget.counter-repaired',
        targetType: 'budget',
        targetId: h.budgetId,
        details: { ...h },
      })),
      ...malformedRecords.map((m): AuditEntry => ({
        orgId,
        action: 'budget.record-repaired',
        targetType: 'budget-record',
        targetId: m.id,
        details: { record: m.record, why: 'malformed reservation or lease record, skipped by the sweep' },
      })),
    ];
    await recordAudit(this.prisma, systemActor(actor), ...audits);
    for (const h of heldRepaired) this.repairedRecords.inc({ kind: h.field, reason: 'records-in-flight' });
    for (const m of malformedRecords)
      this.repairedRecords.inc({ kind: m.id.startsWith('L:') ? 'lease' : 'reservation', reason: 'malformed' });
    for (const h of heldRepaired)
      this.logger.warn(
        `budget counter repaired org=${orgId} budget=${h.budgetId} ${h.field} ${h.beforeMicros} -> ${h.afterMicros}`,
      );
    for (const m of malformedRecords)
      this.logger.warn(`malformed budget record dropped org=${orgId} id=${m.id} record=${m.record}`);
    return { heldRepaired, malformedRecords };
  }

  /**
   * The org's usage events in the outbox (its shard's stream, and the one from before sharding),
   * by event id (entries that are not valid events are skipped).
   */
  private async outboxEvents(orgId: string): Promise<Map<string, OutboxEvent>> {
    const out = new Map<string, OutboxEvent>();
    for (const { events: stream } of [
      usageOutboxKeys(this.redis.prefix, shardOf(orgId)),
      usageOutboxKeys(this.redis.prefix),
    ]) {
      let start = '-';
      for (;;) {
        const page = await this.redis.client.xrange(stream, start, '+', 'COUNT', OUTBOX_PAGE);
        for (const [, fields] of page) {
          const e = outboxEventOf(fields);
          if (e && e.orgId === orgId) out.set(e.id, e);
        }
        if (page.length < OUTBOX_PAGE) break;
        start = `(${page[page.length - 1][0]}`;
      }
    }
    return out;
  }

  /** The counter of a budget's period, as the budget lib names it (`<prefix>:{s<n>}:org:<id>:budget:<budgetId>:<periodStartMs>`). */
  private counterKey(orgId: string, s: Standing): string {
    return this.redis.orgKey(orgId, 'budget', s.budgetId, String(s.periodStart.getTime()));
  }

  private lastReportKey(orgId: string): string {
    return this.redis.orgKey(orgId, 'reconcile', 'last');
  }
}

function driftRow(s: Standing, counter: bigint | null, ledger: bigint, outbox: bigint): BudgetDrift {
  return {
    budgetId: s.budgetId,
    scope: s.scope,
    scopeId: s.scopeId,
    period: s.period,
    periodStart: s.periodStart.toISOString(),
    counterSpentMicros: counter === null ? null : counter.toString(),
    ledgerSpentMicros: ledger.toString(),
    outboxSpentMicros: outbox.toString(),
    driftMicros: counter === null ? '0' : (counter - ledger - outbox).toString(),
  };
}

function ledgerWindow(orgId: string, s: Standing): SpendWindow {
  return { orgId, scope: s.scope, scopeId: s.scopeId, start: s.periodStart, end: s.resetsAt };
}

/** Whether an event counts against a budget's current period (the rule the ledger sum applies). */
function counts(s: Standing, e: OutboxEvent): boolean {
  if (e[SCOPE_COLUMN[s.scope]] !== s.scopeId) return false;
  return e.occurredAt >= s.periodStart && (s.resetsAt === null || e.occurredAt < s.resetsAt);
}

function outboxEventOf(fields: string[]): OutboxEvent | null {
  for (let i = 0; i + 1 < fields.length; i += 2) {
    if (fields[i] !== USAGE_ENTRY_FIELD) continue;
    try {
      const e = JSON.parse(fields[i + 1]) as Record<string, unknown>;
      if (
        typeof e.id !== 'string' ||
        typeof e.orgId !== 'string' ||
        typeof e.costMicros !== 'string' ||
        !/^\d+$/.test(e.costMicros)
      )
        return null;
      return {
        id: e.id,
        orgId: e.orgId,
        teamId: String(e.teamId),
        userId: String(e.userId),
        keyId: String(e.keyId),
        costMicros: BigInt(e.costMicros),
        occurredAt: new Date(String(e.occurredAt)),
      };
    } catch {
      return null;
    }
  }
  return null;
}
