import { DynamicModule, Module } from '@nestjs/common';
import { BudgetModule } from '@tollgate/budget';
import { CatalogModule } from '@tollgate/catalog';
import { ConfigModule, EdgeConfig } from '@tollgate/config';
import { DbModule } from '@tollgate/db';
import { IdentityModule } from '@tollgate/identity';
import { MeteringModule } from '@tollgate/metering';
import { PolicyModule } from '@tollgate/policy';
import { PricingModule } from '@tollgate/pricing';
import { QueueModule } from '@tollgate/queue';
import { RateLimitModule } from '@tollgate/rate-limit';
import { RedisModule } from '@tollgate/redis';
import { UpstreamModule } from '@tollgate/upstream';
import { GovernedCallPipeline } from './governed-call/governed-call.pipeline';
import { EdgeMetrics } from './health/edge-metrics.service';
import { HealthController } from './health/health.controller';
import { McpServerFactory } from './mcp/mcp-server.factory';
import { McpController } from './mcp/mcp.controller';
import { UpstreamListChangedRelay } from './upstream-list-changed.relay';

@Module({})
export class EdgeModule {
  static forRoot(config: EdgeConfig): DynamicModule {
    return {
      module: EdgeModule,
      imports: [
        ConfigModule.forRoot(config),
        DbModule,
        RedisModule,
        QueueModule.forRoot(),
        IdentityModule,
        PolicyModule,
        PricingModule,
        RateLimitModule,
        BudgetModule,
        CatalogModule,
        UpstreamModule,
        MeteringModule,
      ],
      controllers: [McpController, HealthController],
      providers: [GovernedCallPipeline, McpServerFactory, EdgeMetrics, UpstreamListChangedRelay],
    };
  }
}
