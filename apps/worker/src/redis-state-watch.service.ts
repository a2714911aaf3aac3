import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { AuditAction, recordAudit, systemActor } from '@tollgate/audit';
import { TOLLGATE_CONFIG, WorkerConfig } from '@tollgate/config';
import { PrismaService } from '@tollgate/db';
import { JobName } from '@tollgate/queue';
import { ensureRedisEpoch, readRedisEpoch, RedisService } from '@tollgate/redis';
import { BudgetReconcileService, FinanceJobs } from '@tollgate/reporting';
import { Counter, Gauge, Registry } from 'prom-client';
import { JobSchedules } from './job-schedules.service';

/** The audit action recording that this deployment's Redis got an epoch: Redis has held its state since. */
export const EPOCH_SET_ACTION = 'redis.epoch-set' satisfies AuditAction;
const ACTOR = 'system:worker';

/** What /readyz needs to know about Redis' state. */
export interface RedisStateReadiness {
  epoch: boolean;
  schedulers: boolean;
  missingSchedulers: string[];
}

/**
 * Notices that Redis lost its data and contains it. Redis holds an epoch key (`<prefix>:epoch`)
 * while it holds the deployment's state; edges refuse calls without it. When the epoch is gone and
 * this deployment had one before (this process saw it, or Postgres records that one was set), the
 * worker says so (error log, `tollgate_redis_data_loss_total`, `tollgate_redis_recovering` while it
 * works), rebuilds the budget counters of current periods from the ledger, re-creates every job
 * scheduler, and only then sets a new epoch. It also re-creates any scheduler found missing.
 * Checks run at start, every `WORKER_REDIS_CHECK_SECONDS`, when Redis reconnects, and when /readyz
 * finds something missing.
 */
@Injectable()
export class RedisStateWatch implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(RedisStateWatch.name);
  readonly registry = new Registry();
  private readonly dataLoss = new Counter({
    name: 'tollgate_redis_data_loss_total',
    help: 'Times this worker found that Redis had lost its data (the epoch key was gone) and rebuilt what it could',
    registers: [this.registry],
  });
  private readonly recovering = new Gauge({
    name: 'tollgate_redis_recovering',
    help: '1 while this worker rebuilds budget counters and job schedulers after Redis lost its data',
    registers: [this.registry],
  });
  private readonly schedulersMissing = new Gauge({
    name: 'tollgate_worker_job_schedulers_missing',
    help: 'Job schedulers the worker owns that its last check found missing (re-created at once)',
    registers: [this.registry],
  });
  private knownEpoch: string | null = null;
  private running: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private readonly onReconnect = () => void this.reconnected();
  private connectedOnce = false;

  constructor(
    private readonly redis: RedisService,
    private readonly prisma: PrismaService,
    private readonly schedules: JobSchedules,
    private readonly reconcile: BudgetReconcileService,
    private readonly finance: FinanceJobs,
    @Inject(TOLLGATE_CONFIG) private readonly config: WorkerConfig,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.checkOnce(true);
    this.connectedOnce = true;
    this.redis.client.on('ready', this.onReconnect);
    this.timer = setInterval(() => void this.check(), this.config.worker.redisCheckSeconds * 1000);
    this.timer.unref();
  }

  async onModuleDestroy(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.redis.client.off('ready', this.onReconnect);
    await this.running;
  }

  /** One check at a time; a check asked for while one runs gets that one. Never throws. */
  check(): Promise<void> {
    this.running ??= this.checkOnce()
      .catch((err: Error) =>
        this.logger.error(
          `Redis state check failed (retried in ${this.config.worker.redisCheckSeconds} s): ${err.message}`,
        ),
      )
      .finally(() => (this.running = null));
    return this.running;
  }

  /** Live: is the epoch there and is every scheduler? Something missing also starts a check. */
  async readiness(): Promise<RedisStateReadiness> {
    const [epoch, missing] = await Promise.all([
      readRedisEpoch(this.redis.client, this.redis.prefix),
      this.schedules.missing(),
    ]);
    if (epoch === null || missing.length > 0) void this.check();
    return { epoch: epoch !== null, schedulers: missing.length === 0, missingSchedulers: missing };
  }

  /** Redis came back after a disconnect: it may have restarted and lost its last writes. */
  private async reconnected(): Promise<void> {
    if (!this.connectedOnce) return;
    this.logger.warn('Redis reconnected: checking its epoch and job schedulers, and reconciling budget counters');
    await this.check();
    // A restart from an AOF written every second can lose the last second of counter updates and
    // outbox entries together; reconciliation repairs the counters against the ledger.
    await this.finance
      .enqueue(JobName.ReconcileBudgets, { orgId: null, repair: true }, { jobId: `reconcile-reconnect-${Date.now()}` })
      .catch((err: Error) => {
        this.logger.warn(`reconciliation after reconnect not queued: ${err.message}`);
      });
  }

  /** At boot (no loss found), every scheduler is upserted so changed intervals take effect. */
  private async checkOnce(boot = false): Promise<void> {
    const epoch = await readRedisEpoch(this.redis.client, this.redis.prefix);
    if (epoch !== null) {
      this.knownEpoch = epoch;
      await (boot ? this.schedules.ensureAllAtBoot() : this.repairSchedulers());
      return;
    }
    if (this.knownEpoch === null && !(await this.epochWasSet())) return this.initialise();
    // Another worker may have just set the first epoch (it sets it before recording it).
    const now = this.knownEpoch === null ? await readRedisEpoch(this.redis.client, this.redis.prefix) : null;
    if (now !== null) {
      this.knownEpoch = now;
      return this.repairSchedulers();
    }
    await this.recover();
  }

  /** A deployment whose Redis never had an epoch: schedulers, then the epoch, and the record of it. */
  private async initialise(): Promise<void> {
    await this.schedules.ensureAll();
    const epoch = await ensureRedisEpoch(this.redis.client, this.redis.prefix);
    await this.recordEpoch(epoch, { reason: 'first-start' });
    this.knownEpoch = epoch;
    this.logger.log(`Redis epoch ${epoch} set (first start of this deployment on this Redis)`);
  }

  private async recover(): Promise<void> {
    const lost = this.knownEpoch;
    this.dataLoss.inc();
    this.recovering.set(1);
    try {
      this.logger.error(
        `Redis lost its data (epoch ${lost ?? 'recorded in Postgres'} is gone): budget counters, usage events not yet in the ledger, reservations, rate-limit windows and job schedulers went with it. Edges refuse calls until budget counters are rebuilt from the ledger; rebuilding now`,
      );
      const reports = await this.reconcile.reconcileAll({ repair: true, actor: ACTOR });
      const rebuilt = reports.reduce((n, r) => n + r.rebuilt.length, 0);
      const syncs = await this.schedules.ensureAll();
      const epoch = await ensureRedisEpoch(this.redis.client, this.redis.prefix);
      await this.recordEpoch(epoch, {
        reason: 'data-loss',
        lostEpoch: lost,
        countersRebuilt: rebuilt,
        orgs: reports.length,
      });
      this.knownEpoch = epoch;
      this.logger.error(
        `Redis recovered from data loss: ${rebuilt} budget counter(s) of ${reports.length} org(s) rebuilt from the ledger, job schedulers re-created (${syncs} upstream sync(s)), new epoch ${epoch}`,
      );
    } finally {
      this.recovering.set(0);
    }
  }

  private async repairSchedulers(): Promise<void> {
    const missing = await this.schedules.missing();
    this.schedulersMissing.set(missing.length);
    if (missing.length === 0) return;
    this.logger.error(`job schedulers missing, re-creating them: ${missing.join(', ')}`);
    await this.schedules.ensureAll();
    const still = await this.schedules.missing();
    this.schedulersMissing.set(still.length);
  }

  /** Whether Postgres records that this deployment's Redis had an epoch. */
  private async epochWasSet(): Promise<boolean> {
    const row = await this.prisma.auditEvent.findFirst({
      where: { action: EPOCH_SET_ACTION, targetType: 'redis', targetId: this.redis.prefix },
      select: { id: true },
    });
    return row !== null;
  }

  private async recordEpoch(epoch: string, details: Record<string, unknown>): Promise<void> {
    await recordAudit(this.prisma, systemActor(ACTOR), {
      orgId: null,
      action: EPOCH_SET_ACTION,
      targetType: 'redis',
      targetId: this.redis.prefix,
      details: { epoch, ...details },
    });
  }
}
