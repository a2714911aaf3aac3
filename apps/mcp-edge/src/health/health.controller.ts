import { Controller, Get, Header, HttpCode, ServiceUnavailableException, UseGuards } from '@nestjs/common';
import { PrismaService } from '@tollgate/db';
import { RedisService } from '@tollgate/redis';
import { EdgeMetrics } from './edge-metrics.service';
import { MetricsTokenGuard } from '@tollgate/observability';

@Controller()
export class HealthController {
  constructor(
    private readonly prisma: PrismaService,
    private readonly redis: RedisService,
    private readonly metrics: EdgeMetrics,
  ) {}

  @Get('healthz')
  health() {
    return { status: 'ok' };
  }

  @Get('readyz')
  @HttpCode(200)
  async ready() {
    const [db, redis] = await Promise.allSettled([this.prisma.$queryRaw`SELECT 1`, this.redis.ping()]);
    const status = { database: db.status === 'fulfilled', redis: redis.status === 'fulfilled' && redis.value === true };
    if (!status.database || !status.redis) throw new ServiceUnavailableException({ status: 'unavailable', ...status });
    return { status: 'ready', ...status };
  }

  @Get('metrics')
  @UseGuards(MetricsTokenGuard)
  @Header('Content-Type', 'text/plain; version=0.0.4')
  metricsText(): Promise<string> {
    return this.metrics.registry.metrics();
  }
}
