import { DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_PIPE } from '@nestjs/core';
import { PassportModule } from '@nestjs/passport';
import { BudgetModule } from '@tollgate/budget';
import { ReportingModule } from '@tollgate/reporting';
import { RateLimitModule } from '@tollgate/rate-limit';
import { CatalogModule } from '@tollgate/catalog';
import { AdminConfig, ConfigModule } from '@tollgate/config';
import { ConnectionsModule } from '@tollgate/connections';
import { DbModule } from '@tollgate/db';
import { IdentityModule } from '@tollgate/identity';
import { PolicyModule } from '@tollgate/policy';
import { PricingModule } from '@tollgate/pricing';
import { QueueModule } from '@tollgate/queue';
import { RedisModule } from '@tollgate/redis';
import { AdminTokenAdminService } from './admin-tokens/admin-token-admin.service';
import { AdminTokensController } from './admin-tokens/admin-tokens.controller';
import { AlertsController } from './alerts/alerts.controller';
import { AuditController } from './audit/audit.controller';
import { AuditService } from './audit/audit.service';
import { AdminAuthGuard } from './auth/admin-auth.guard';
import { ADMIN_BEARER_STRATEGY, AdminBearerStrategy } from './auth/admin-bearer.strategy';
import { OrgScopeGuard } from './auth/org-scope.guard';
import { BudgetsController } from './budgets/budgets.controller';
import { ConnectionsController } from './connections/connections.controller';
import { OAuthCallbackController } from './connections/oauth-callback.controller';
import { RateLimitsController } from './rate-limits/rate-limits.controller';
import { AdminExceptionFilter } from './common/admin-exception.filter';
import { AdminValidationPipe } from './common/admin-validation.pipe';
import { HealthController } from './health/health.controller';
import { AdminMetrics } from './health/admin-metrics.service';
import { queueTelemetry, ShutdownDrain } from '@tollgate/observability';
import { BUDGET_COUNTERS_PROVIDER } from './reports/budget-counters.provider';
import { BudgetReconcileController } from './reports/budget-reconcile.controller';
import { ReportsController } from './reports/reports.controller';
import { RefusalsController } from './reports/refusals.controller';
import { CallsController } from './calls/calls.controller';
import { TrailController } from './trail/trail.controller';
import { PlatformReportsController } from './reports/platform-reports.controller';
import { UserOffboardingService } from './users/user-offboarding.service';
import { KeyAdminService } from './keys/key-admin.service';
import { KeysController } from './keys/keys.controller';
import { OAuthServerModule } from '@tollgate/oauth-server';
import { EmailDomainsController } from './orgs/email-domains.controller';
import { OAuthModule } from './oauth/oauth.module';
import { SsoModule } from './sso/sso.module';
import { OrgsController } from './orgs/orgs.controller';
import { PoliciesController } from './policies/policies.controller';
import { PolicyChangesController } from './policies/policy-changes.controller';
import { PolicyChangeService } from './policies/policy-change.service';
import { PricesController } from './prices/prices.controller';
import { PriceHistoryController } from './prices/price-history.controller';
import { TeamsController } from './teams/teams.controller';
import { UpstreamAdminService } from './upstreams/upstream-admin.service';
import { UpstreamsController } from './upstreams/upstreams.controller';
import { UpstreamLifecycleController } from './upstreams/upstream-lifecycle.controller';
import { UsersController } from './users/users.controller';
import { KeyPreviewController } from './keys/key-preview.controller';
import { KeyPreviewService } from './keys/key-preview.service';
import { EffectivePolicyController } from './keys/effective-policy.controller';
import { EffectivePolicyService } from './keys/effective-policy.service';
import { KeyScopeGuard } from './keys/key-scope.guard';
import { ToolProfilerModule } from './tools/tool-profiler.module';
import { ToolsController } from './tools/tools.controller';
import { CatalogEntriesController } from './tools/catalog-entries.controller';
import { CatalogEntryReviewService } from '@tollgate/catalog';
import { ToolBulkReviewController } from './tools/tool-bulk-review.controller';

/** The admin API process: REST controllers over the domain libs, nothing more. */
@Module({})
export class AdminApiModule {
  static forRoot(config: AdminConfig): DynamicModule {
    return {
      module: AdminApiModule,
      imports: [
        ConfigModule.forRoot(config),
        DbModule,
        RedisModule,
        QueueModule.forRoot({ producerOnly: true, telemetry: queueTelemetry() }),
        IdentityModule,
        ToolProfilerModule,
        CatalogModule,
        ConnectionsModule,
        BudgetModule,
        ReportingModule.register({ imports: [BudgetModule], budgetCounters: BUDGET_COUNTERS_PROVIDER }),
        RateLimitModule,
        PricingModule,
        PolicyModule,
        PassportModule.register({ defaultStrategy: ADMIN_BEARER_STRATEGY, session: false }),
        OAuthServerModule,
        OAuthModule,
        SsoModule,
      ],
      controllers: [
        HealthController,
        ConnectionsController,
        OAuthCallbackController,
        OrgsController,
        EmailDomainsController,
        AdminTokensController,
        TeamsController,
        UsersController,
        KeysController,
        UpstreamsController,
        UpstreamLifecycleController,
        PoliciesController,
        PolicyChangesController,
        PricesController,
        PriceHistoryController,
        BudgetsController,
        RateLimitsController,
        AuditController,
        ReportsController,
        RefusalsController,
        CallsController,
        TrailController,
        PlatformReportsController,
        BudgetReconcileController,
        AlertsController,
        ToolBulkReviewController,
        ToolsController,
        CatalogEntriesController,
        KeyPreviewController,
        EffectivePolicyController,
      ],
      providers: [
        AuditService,
        KeyAdminService,
        AdminTokenAdminService,
        UserOffboardingService,
        UpstreamAdminService,
        CatalogEntryReviewService,
        KeyPreviewService,
        EffectivePolicyService,
        PolicyChangeService,
        ShutdownDrain,
        AdminMetrics,
        AdminBearerStrategy,
        // Guards run in this order: authenticate, then check the org and the role, then the key's owner.
        { provide: APP_GUARD, useClass: AdminAuthGuard },
        { provide: APP_GUARD, useClass: OrgScopeGuard },
        { provide: APP_GUARD, useClass: KeyScopeGuard },
        { provide: APP_FILTER, useClass: AdminExceptionFilter },
        { provide: APP_PIPE, useClass: AdminValidationPipe },
      ],
    };
  }
}
