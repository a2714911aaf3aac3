import { DynamicModule, Module } from '@nestjs/common';
import { AdmissionClock, AdmissionModule, SYSTEM_CLOCK } from '@tollgate/admission';
import { BudgetModule } from '@tollgate/budget';
import { CatalogModule } from '@tollgate/upstream-registry';
import { ConfigModule, EdgeConfig } from '@tollgate/config';
import { queueTelemetry, ShutdownDrain } from '@tollgate/observability';
import { ConnectionsModule } from '@tollgate/connections';
import { DbModule } from '@tollgate/db';
import { IdentityModule } from '@tollgate/identity';
import { MeteringModule } from '@tollgate/usage';
import { PolicyModule } from '@tollgate/policy';
import { PricingModule } from '@tollgate/pricing';
import { QueueModule } from '@tollgate/queue';
import { RateLimitModule } from '@tollgate/rate-limit';
import { RedisModule } from '@tollgate/redis';
import { TaskStore } from '@tollgate/tasks';
import { UpstreamModule } from '@tollgate/mcp-client';
import { AnswerEventStore } from '@tollgate/answer-events';
import { AnswerStreamResumption } from './answer-streams/answer-stream-resumption';
import { CodeModeService } from './code-mode/code-mode.service';
import { ToolDisclosure } from './disclosure/tool-disclosure.service';
import { ToolRouter } from './dispatch/tool-router.service';
import { GovernedCallPipeline } from './governed-call/governed-call.pipeline';
import { TaskOpening } from './governed-call/task-opening.service';
import { TaskSettler } from './governed-call/task-settler.service';
import { ResultPager } from './governed-call/result-pager.service';
import { TaskRelay } from './governed-call/task-relay.service';
import { TaskInputHold } from './governed-call/task-input-hold.service';
import { InFlightCalls } from './dispatch/in-flight-calls.service';
import { CallDispatcher } from './dispatch/call-dispatcher.service';
import { McpSessionStore } from './session/mcp-session.store';
import { AgentRequests } from './dispatch/agent-requests.service';
import { StatelessRevisionHandler } from './transports/stateless-revision.handler';
import { SessionHub } from './session/session-hub.service';
import { VisibleListWatch } from './session/visible-list-watch.service';
import { ResourceSubscriptions } from './session/resource-subscriptions.service';
import { GovernedItemPipeline } from './governed-call/governed-item.pipeline';
import { EmbeddedResources } from './governed-call/embedded-resources.service';
import { CatalogRelayHandlers } from './dispatch/catalog-relay.handlers';
import { UpstreamCaller } from './governed-call/upstream-caller.service';
import { EdgeAccessLog } from './health/edge-access-log';
import { EdgeMetrics } from './health/edge-metrics.service';
import { HealthController } from './health/health.controller';
import { McpServerFactory } from './transports/mcp-server.factory';
import { LeanToolCallHandler } from './transports/lean-tool-call.handler';
import { McpController } from './endpoint/mcp.controller';
import { McpEndpoint } from './endpoint/mcp-endpoint';
import { HostileInputAllowance } from './endpoint/hostile-input-allowance.service';
import { UpstreamListChangedRelay } from './upstream-list-changed.relay';
import { AgentTrail } from './trail/agent-trail';

@Module({})
export class EdgeModule {
  /** `clock`: what the edge reads as now (a test's TestClock; production, the system clock). */
  static forRoot(config: EdgeConfig, clock: AdmissionClock = SYSTEM_CLOCK): DynamicModule {
    return {
      module: EdgeModule,
      imports: [
        ConfigModule.forRoot(config, clock),
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
          clock,
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
        TaskOpening,
        TaskSettler,
        TaskRelay,
        TaskInputHold,
        AnswerEventStore,
        AnswerStreamResumption,
        InFlightCalls,
        CallDispatcher,
        McpSessionStore,
        SessionHub,
        VisibleListWatch,
        UpstreamCaller,
        ToolDisclosure,
        ToolRouter,
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
