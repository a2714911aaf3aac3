import { Controller, Get, Header, Logger, Res, UseGuards } from '@nestjs/common';
import { CallAdmissionService } from '@tollgate/admission';
import { PrismaService } from '@tollgate/db';
import { EdgeMetrics } from './edge-metrics.service';
import {
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

  constructor(
    private readonly prisma: PrismaService,
    private readonly admission: CallAdmissionService,
    private readonly metrics: EdgeMetrics,
    private readonly drain: ShutdownDrain,
  ) {}

  @Get('healthz')
  health() {
    return { status: 'ok' };
  }

  /** Same shape as the admin API's and the worker's `/readyz` (see runReadiness). */
  @Get('readyz')
  async ready(@Res({ passthrough: true }) res: Response): Promise<Readiness> {
    // Draining (SIGTERM): out of the load balancer at once, whatever the dependencies say.
    if (this.drain.draining) return drainingReadiness(res);
    const { readiness, failures } = await runReadiness(res, {
      db: () => this.prisma.$queryRaw`SELECT 1`,
      // A no-op admission on every shard, not a PING: ready only if calls can be admitted.
      redis: () => this.admission.probe(),
    });
    for (const [name, reason] of Object.entries(failures))
      this.logger.warn(`readiness check ${name} failed: ${reason}`);
    return readiness;
  }

  @Get('metrics')
  @UseGuards(MetricsTokenGuard)
  @Header('Content-Type', 'text/plain; version=0.0.4')
  metricsText(): Promise<string> {
    return this.metrics.registry.metrics();
  }
}
