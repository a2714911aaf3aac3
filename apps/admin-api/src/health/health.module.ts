import { Module } from '@nestjs/common';
import { ShutdownDrain } from '@tollgate/observability';
import { DomainLibsModule } from '../domain-libs.module';
import { AdminMetrics } from './admin-metrics.service';
import { HealthController } from './health.controller';

/** Liveness, readiness (503 while draining) and /metrics. */
@Module({
  imports: [DomainLibsModule],
  controllers: [HealthController],
  providers: [ShutdownDrain, AdminMetrics],
  exports: [ShutdownDrain, AdminMetrics],
})
export class HealthModule {}
