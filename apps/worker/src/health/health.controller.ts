import { Controller, Get, Header, ServiceUnavailableException, UseGuards } from '@nestjs/common';
import { PrismaService } from '@tollgate/db';
import { JobProducer, QueueName } from '@tollgate/queue';
import { RedisService } from '@tollgate/redis';
import { Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import { UsageLedgerConsumer } from '../processors/usage-ledger.consumer';
import { RedisStateWatch } from '../redis-state-watch.service';
import { MetricsTokenGuard } from '@tollgate/observability';

@Controller()
export class HealthController {
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

  constructor(
    private readonly prisma: PrismaService,
    private readonly redis: RedisService,
    private readonly jobs: JobProducer,
    private readonly usageLedger: UsageLedgerConsumer,
    private readonly redisState: RedisStateWatch,
  ) {
    collectDefaultMetrics({ register: this.registry });
  }

  @Get('healthz')
  health() {
    return { status: 'ok' };
  }

  @Get('readyz')
  async ready() {
    const [db, redis] = await Promise.allSettled([this.prisma.$queryRaw`SELECT 1`, this.redis.ping()]);
    const status = { database: db.status === 'fulfilled', redis: redis.status === 'fulfilled' && redis.value === true };
    if (!status.database || !status.redis) throw new ServiceUnavailableException({ status: 'unavailable', ...status });
    // Redis answers but may have lost its data: no epoch, or job schedulers gone (a check re-creates them).
    const state = await this.redisState.readiness();
    if (!state.epoch || !state.schedulers)
      throw new ServiceUnavailableException({ status: 'unavailable', ...status, ...state });
    return { status: 'ready', ...status, ...state };
  }

  @Get('metrics')
  @UseGuards(MetricsTokenGuard)
  @Header('Content-Type', 'text/plain; version=0.0.4')
  async metrics(): Promise<string> {
    for (const name of Object.values(QueueName)) {
      const counts = await this.jobs.queue(name).getJobCounts('waiting', 'active', 'delayed', 'failed');
      for (const [state, n] of Object.entries(counts)) this.depth.set({ queue: name, state }, n);
    }
    // Usage events travel through the outbox stream; the usage-ledger queue only drains legacy jobs.
    const backlog = await this.usageLedger.backlog();
    this.outbox.set({ state: 'waiting' }, backlog.waiting);
    this.outbox.set({ state: 'pending' }, backlog.pending);
    this.outbox.set({ state: 'dead_lettered' }, backlog.deadLettered);
    return (await this.registry.metrics()) + (await this.redisState.registry.metrics());
  }
}
