import { Controller, Get, Header, ServiceUnavailableException } from '@nestjs/common';
import { PrismaService } from '@tollgate/db';
import { JobProducer, QueueName } from '@tollgate/queue';
import { RedisService } from '@tollgate/redis';
import { Gauge, Registry, collectDefaultMetrics } from 'prom-client';

@Controller()
export class HealthController {
  private readonly registry = new Registry();
  private readonly depth = new Gauge({ name: 'tollgate_worker_queue_jobs', help: 'Jobs per queue and state', labelNames: ['queue', 'state'], registers: [this.registry] });

  constructor(
    private readonly prisma: PrismaService,
    private readonly redis: RedisService,
    private readonly jobs: JobProducer,
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
    return { status: 'ready', ...status };
  }

  @Get('metrics')
  @Header('Content-Type', 'text/plain; version=0.0.4')
  async metrics(): Promise<string> {
    for (const name of Object.values(QueueName)) {
      const counts = await this.jobs.queue(name).getJobCounts('waiting', 'active', 'delayed', 'failed');
      for (const [state, n] of Object.entries(counts)) this.depth.set({ queue: name, state }, n);
    }
    return this.registry.metrics();
  }
}
