import { Module } from '@nestjs/common';
import { ShutdownDrain } from '@tollgate/observability';
import { AdminMetrics } from './admin-metrics.service';
import { HealthController } from './health.controller';

/** Liveness, readiness (503 while draining) and /metrics. */
@Module({
  controllers: [HealthController],
  providers: [ShutdownDrain, AdminMetrics],
  exports: [ShutdownDrain, AdminMetrics],
})
export class HealthModule {}
