import { Controller, Get, Header, Logger, Res, UseGuards } from '@nestjs/common';
import { ApiExcludeEndpoint } from '@nestjs/swagger';
import { ApiOkResponse, ApiOperation, ApiServiceUnavailableResponse, ApiTags } from '@nestjs/swagger';
import { PrismaService } from '@tollgate/db';
import { RedisService } from '@tollgate/redis';
import type { Response } from 'express';
import { Public } from '../auth/public.decorator';
import {
  type Readiness,
  drainingReadiness,
  MetricsTokenGuard,
  runReadiness,
  ShutdownDrain,
} from '@tollgate/observability';
import { AdminMetrics } from './admin-metrics.service';

@ApiTags('health')
@Public()
@Controller()
export class HealthController {
  private readonly logger = new Logger(HealthController.name);

  constructor(
    private readonly prisma: PrismaService,
    private readonly redis: RedisService,
    private readonly drain: ShutdownDrain,
    private readonly metrics: AdminMetrics,
  ) {}

  @Get('healthz')
  @ApiOperation({ summary: 'Liveness: the process answers' })
  @ApiOkResponse({ schema: { example: { status: 'ok' } } })
  healthz(): { status: 'ok' } {
    return { status: 'ok' };
  }

  @Get('readyz')
  @ApiOperation({ summary: 'Readiness: Postgres and Redis answer' })
  @ApiOkResponse({ schema: { example: { status: 'ok', checks: { db: 'ok', redis: 'ok' } } } })
  @ApiServiceUnavailableResponse({
    schema: { example: { status: 'unavailable', checks: { db: 'ok', redis: 'failed' } } },
  })
  async readyz(@Res({ passthrough: true }) res: Response): Promise<Readiness> {
    if (this.drain.draining) return drainingReadiness(res);
    const { readiness, failures } = await runReadiness(res, {
      db: () => this.prisma.$queryRaw`SELECT 1`,
      redis: () => this.redis.ping(),
    });
    for (const [name, reason] of Object.entries(failures))
      this.logger.warn(`readiness check ${name} failed: ${reason}`);
    return readiness;
  }

  @Get('metrics')
  @ApiExcludeEndpoint()
  @UseGuards(MetricsTokenGuard)
  @Header('Content-Type', 'text/plain; version=0.0.4')
  metricsText(): Promise<string> {
    return this.metrics.registry.metrics();
  }
}
