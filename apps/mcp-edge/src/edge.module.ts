import { DynamicModule, Module } from '@nestjs/common';
import { AdmissionModule } from '@tollgate/admission';
import { BudgetModule } from '@tollgate/budget';
import { CatalogModule } from '@tollgate/catalog';
import { ConfigModule, EdgeConfig } from '@tollgate/config';
import { queueTelemetry, ShutdownDrain } from '@tollgate/observability';
import { ConnectionsModule } from '@tollgate/connections';
import { DbModule } from '@tollgate/db';
import { IdentityModule } from '@tollgate/identity';
import { MeteringModule } from '@tollgate/metering';
import { PolicyModule } from '@tollgate/policy';
import { PricingModule } from '@tollgate/pricing';
import { QueueModule } from '@tollgate/queue';
import { RateLimitModule } from '@tollgate/rate-limit';
import { RedisModule } from '@tollgate/redis';
import { TaskStore } from '@tollgate/tasks';
import { UpstreamModule } from '@tollgate/upstream';
import { CodeModeService } from './code-mode/code-mode.service';
import { ProgressiveDisclosure } from './disclosure/progressive-disclosure.service';
import { GovernedCallPipeline } from './governed-call/governed-call.pipeline';
import { ResultPager } from './governed-call/result-pager.service';
import { TaskRelay } from './governed-call/task-relay.service';
import { InFlightCalls } from './governed-call/in-flight-calls.service';
import { McpSessionStore } from './session/mcp-session.store';
import { AgentRequests } from './mcp/agent-requests.service';
import { StatelessRevisionHandler } from './mcp/stateless-revision.handler';
import { SessionHub } from './session/session-hub.service';
import { VisibleListWatch } from './session/visible-list-watch.service';
import { ResourceSubscriptions } from './session/resource-subscriptions.service';
import { GovernedItemPipeline } from './governed-call/governed-item.pipeline';
import { EmbeddedResources } from './governed-call/embedded-resources.service';
import { CatalogRelayHandlers } from './mcp/catalog-relay.handlers';
import { UpstreamCaller } from './governed-call/upstream-caller.service';
import { EdgeAccessLog } from './health/edge-access-log';
import { EdgeMetrics } from './health/edge-metrics.service';
import { HealthController } from './health/health.controller';
import { McpServerFactory } from './mcp/mcp-server.factory';
import { LeanToolCallHandler } from './mcp/lean-tool-call.handler';
import { McpController } from './mcp/mcp.controller';
import { McpEndpoint } from './mcp/mcp-endpoint';
import { HostileInputAllowance } from './mcp/hostile-input-allowance.service';
import { UpstreamListChangedRelay } from './upstream-list-changed.relay';
import { AgentTrail } from './trail/agent-trail';

@Module({})
export class EdgeModule {
  static forRoot(config: EdgeConfig): DynamicModule {
    return {
      module: EdgeModule,
      imports: [
        ConfigModule.forRoot(config),
        DbModule,
        RedisModule,
        QueueModule.forRoot({ telemetry: queueTelemetry() }),
        IdentityModule,
        PolicyModule,
        PricingModule,
        RateLimitModule,
        BudgetModule,
        AdmissionModule.forSettings({
          reservationTtlMs: config.edge.reservationTtlSeconds * 1000,
          leases: config.edge.admissionLeases,
          leaseIdleMs: config.edge.leaseIdleMs,
          completionWait: config.redis.completionWait,
        }),
        CatalogModule,
        UpstreamModule,
        MeteringModule,
        ConnectionsModule,
      ],
      controllers: [McpController, HealthController],
      providers: [
        GovernedCallPipeline,
        GovernedItemPipeline,
        EmbeddedResources,
        CatalogRelayHandlers,
        ResourceSubscriptions,
        ResultPager,
        TaskStore,
        TaskRelay,
        InFlightCalls,
        McpSessionStore,
        SessionHub,
        VisibleListWatch,
        UpstreamCaller,
        ProgressiveDisclosure,
        CodeModeService,
        McpServerFactory,
        LeanToolCallHandler,
        AgentRequests,
        StatelessRevisionHandler,
        McpEndpoint,
        HostileInputAllowance,
        EdgeMetrics,
        EdgeAccessLog,
        ShutdownDrain,
        UpstreamListChangedRelay,
        AgentTrail,
      ],
    };
  }
}
