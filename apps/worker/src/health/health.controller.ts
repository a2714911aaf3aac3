import { Controller, Get, Header, Logger, Res, UseGuards } from '@nestjs/common';
import { PrismaService } from '@tollgate/db';
import { JobProducer, QueueName } from '@tollgate/queue';
import { RedisService } from '@tollgate/redis';
import { BudgetReconcileService } from '@tollgate/reporting';
import { Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import { LedgerWriter, UsageLedgerConsumer } from '@tollgate/usage';
import { RedisStateWatch } from '../redis-state-watch.service';
import {
  ClientLatencyMetrics,
  drainingReadiness,
  MetricsTokenGuard,
  type Readiness,
  runReadiness,
  ShutdownDrain,
} from '@tollgate/observability';
import type { Response } from 'express';

@Controller()
export class HealthController {
  private readonly logger = new Logger(HealthController.name);
  private readonly registry = new Registry();
  private readonly depth = new Gauge({
    name: 'tollgate_worker_queue_jobs',
    help: 'Jobs per queue and state',
    labelNames: ['queue', 'state'],
    registers: [this.registry],
  });
  private readonly outbox = new Gauge({
    name: 'tollgate_usage_outbox_entries',
    help: 'Usage events not yet in the ledger: waiting (not read by a worker), pending (read, not yet written); dead_lettered: entries that are not valid usage events',
    labelNames: ['state'],
    registers: [this.registry],
  });
  private readonly outboxAge = new Gauge({
    name: 'tollgate_usage_outbox_oldest_seconds',
    help: 'Age of the oldest usage event not yet in the ledger (the ledger lag); 0 when none waits',
    registers: [this.registry],
  });

  constructor(
    private readonly prisma: PrismaService,
    private readonly redis: RedisService,
    private readonly jobs: JobProducer,
    private readonly usageLedger: UsageLedgerConsumer,
    private readonly redisState: RedisStateWatch,
    private readonly drain: ShutdownDrain,
    private readonly ledgerWriter: LedgerWriter,
    private readonly reconcile: BudgetReconcileService,
  ) {
    collectDefaultMetrics({ register: this.registry });
    new ClientLatencyMetrics(this.registry).watch(redis.client, [prisma.pool, prisma.reportsPool]);
  }

  @Get('healthz')
  health() {
    return { status: 'ok' };
  }

  /** Same shape as the edge's and the admin API's `/readyz` (see runReadiness), plus the missing schedulers. */
  @Get('readyz')
  async ready(@Res({ passthrough: true }) res: Response): Promise<Readiness & { missingSchedulers: string[] }> {
    if (this.drain.draining) return { ...drainingReadiness(res), missingSchedulers: [] };
    // Redis answers but may have lost its data: no epoch, or job schedulers gone (a check re-creates
    // them). Asked only once Redis answers.
    const redisUp = this.redis.ping().catch(() => false);
    const state = redisUp.then((up) => (up ? this.redisState.readiness() : null));
    let missingSchedulers: string[] = [];
    state.then(
      (s) => (missingSchedulers = s?.missingSchedulers ?? []),
      () => undefined,
    );
    const { readiness, failures } = await runReadiness(res, {
      db: () => this.prisma.$queryRaw`SELECT 1`,
      redis: () => redisUp,
      epoch: async () => (await state)?.epoch ?? false,
      schedulers: async () => (await state)?.schedulers ?? false,
    });
    for (const [name, reason] of Object.entries(failures))
      this.logger.warn(`readiness check ${name} failed: ${reason}`);
    return { ...readiness, missingSchedulers };
  }

  @Get('metrics')
  @UseGuards(MetricsTokenGuard)
  @Header('Content-Type', 'text/plain; version=0.0.4')
  async metrics(): Promise<string> {
    for (const name of Object.values(QueueName)) {
      const counts = await this.jobs.queue(name).getJobCounts('waiting', 'active', 'delayed', 'failed');
      for (const [state, n] of Object.entries(counts)) this.depth.set({ queue: name, state }, n);
    }
    // Usage events travel through the outbox streams (libs/usage), not a queue.
    const backlog = await this.usageLedger.backlog();
    this.outbox.set({ state: 'waiting' }, backlog.waiting);
    this.outbox.set({ state: 'pending' }, backlog.pending);
    this.outbox.set({ state: 'dead_lettered' }, backlog.deadLettered);
    this.outboxAge.set((await this.usageLedger.oldestWaitingMs()) / 1000);
    return (
      (await this.registry.metrics()) +
      (await this.redisState.registry.metrics()) +
      (await this.ledgerWriter.registry.metrics()) +
      (await this.reconcile.registry.metrics())
    );
  }
}
